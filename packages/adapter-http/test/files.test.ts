import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { expect } from 'chai';
import { expectProblem, expectRateLimitHeaders } from '../../../tools/test-support/http.js';
import { ACCOUNT_B, apiKey, bearer, BASE_URL, call, runPath, SECRETS, startApps, type Answer, type RunningApps } from './support/harness.js';
import { OpenApiChecker } from './support/openapi-check.js';

const key = apiKey(SECRETS.keyA);
const keyB = apiKey(SECRETS.keyB);
/** The smallest bytes `file-type` takes for a PDF: the signature, a body, the end marker. */
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n', 'latin1');
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4e20000000049454e44ae426082', 'hex');
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

interface FileData {
  readonly file_key: string;
  readonly status: string;
  readonly upload_url: string;
  readonly upload_headers: Record<string, string>;
  readonly sha256: string | null;
  readonly reason: string | null;
  readonly size_bytes: number;
}
const dataOf = (answer: Answer): FileData => (answer.body as { data: FileData }).data;

/** PUTs `bytes` to a prepared file's `upload_url` (rewritten from `{base_url}` to the app under test). */
async function put(apps: RunningApps, file: FileData, bytes: Uint8Array | string, headers: Record<string, string> = {}): Promise<Answer> {
  return call(apps.url, 'PUT', file.upload_url.replace(BASE_URL, apps.url), { raw: bytes, headers: { ...file.upload_headers, ...headers } });
}

/** A chunked PUT (no Content-Length) of `chunks`, answered however the server chooses. */
function putChunked(apps: RunningApps, file: FileData, chunks: readonly Buffer[]): Promise<{ status: number; body: string }> {
  const url = new URL(file.upload_url.replace(BASE_URL, apps.url));
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers: { 'transfer-encoding': 'chunked', ...file.upload_headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe('adapter-http: files (docs/CONTRACT.md "Files")', function () {
  let apps: RunningApps;
  let checker: OpenApiChecker;

  async function prepare(body: Record<string, unknown>, headers = key): Promise<Answer> {
    return call(apps.url, 'POST', '/api/v1/files', { headers, json: body });
  }
  async function readyFile(bytes: Buffer = PDF, name = 'invoice.pdf', type = 'application/pdf'): Promise<FileData> {
    const prepared = dataOf(await prepare({ file_name: name, content_type: type, size_bytes: bytes.length }));
    expect((await put(apps, prepared, bytes)).status).to.equal(200);
    const done = await call(apps.url, 'POST', `/api/v1/files/${prepared.file_key}/complete`, { headers: key });
    expect(dataOf(done).status, done.text).to.equal('ready');
    return dataOf(done);
  }

  beforeEach(async function () {
    apps = await startApps({ files: { maxBytes: 1024 * 1024 } });
    checker = OpenApiChecker.fromYaml((await call(apps.url, 'GET', '/openapi.yaml')).text);
  });
  afterEach(async function () {
    await apps.close();
  });

  it('prepare → PUT → complete → ready; get, list, start a run with it; delete while it runs → 409, after → 204', async function () {
    const prepared = await prepare({ file_name: 'invoice.pdf', content_type: 'application/pdf', size_bytes: PDF.length, sha256: sha256(PDF) });
    expect(prepared.status, prepared.text).to.equal(201);
    checker.expectDocumented('/api/v1/files', 'POST', prepared);
    expectRateLimitHeaders(prepared, true);
    const file = dataOf(prepared);
    expect(file).to.include({ status: 'pending', size_bytes: PDF.length, upload_method: 'PUT' });
    expect(prepared.headers.get('location')).to.equal(`${BASE_URL}/api/v1/files/${file.file_key}`);
    expect(file.upload_url).to.match(/\/api\/v1\/files\/file_[0-9a-f]{32}\/upload\?expires=[0-9]+&signature=/u);

    const uploaded = await put(apps, file, PDF);
    expect(uploaded.status, uploaded.text).to.equal(200);
    checker.expectDocumented('/api/v1/files/{file_key}/upload', 'PUT', uploaded);
    expect(dataOf(uploaded).status).to.equal('pending');

    const completed = await call(apps.url, 'POST', `/api/v1/files/${file.file_key}/complete`, { headers: key });
    checker.expectDocumented('/api/v1/files/{file_key}/complete', 'POST', completed);
    expect(dataOf(completed)).to.include({ status: 'ready', sha256: sha256(PDF), reason: null });

    const got = await call(apps.url, 'GET', `/api/v1/files/${file.file_key}`, { headers: bearer(SECRETS.tokenFiles) });
    checker.expectDocumented('/api/v1/files/{file_key}', 'GET', got);
    expect(dataOf(got).status).to.equal('ready');
    const listed = await call(apps.url, 'GET', '/api/v1/files?status=ready', { headers: key });
    checker.expectDocumented('/api/v1/files', 'GET', listed);
    expect((listed.body as { data: FileData[] }).data.map((f) => f.file_key)).to.deep.equal([file.file_key]);

    const started = await call(apps.url, 'POST', runPath(), { headers: key, json: { files: [{ file_key: file.file_key, file_name: 'invoice.pdf', content_type: 'application/pdf' }] } });
    expect(started.status, started.text).to.equal(202);
    const inUse = await call(apps.url, 'DELETE', `/api/v1/files/${file.file_key}`, { headers: key });
    checker.expectDocumented('/api/v1/files/{file_key}', 'DELETE', inUse);
    expect(expectProblem(inUse, 409, 'file_in_use').detail).to.include((started.body as { data: { run_id: string } }).data.run_id);
    await call(apps.url, 'POST', `/api/v1/runs/${(started.body as { data: { run_id: string } }).data.run_id}/cancel`, { headers: key });
    const deleted = await call(apps.url, 'DELETE', `/api/v1/files/${file.file_key}`, { headers: key });
    expect(deleted.status, deleted.text).to.equal(204);
    checker.expectDocumented('/api/v1/files/{file_key}', 'DELETE', deleted);
    expectProblem(await call(apps.url, 'GET', `/api/v1/files/${file.file_key}`, { headers: key }), 404, 'not_found');
    expect(await apps.world.files.store.open(file.file_key)).to.equal(undefined);
  });

  it("every file operation is charged once to the credential's window; the upload, which carries no credential, to none", async function () {
    const remaining = (answer: Answer): number => Number(answer.headers.get('ratelimit-remaining'));
    const prepared = await prepare({ file_name: 'invoice.pdf', content_type: 'application/pdf', size_bytes: PDF.length });
    let last = remaining(prepared);
    const file = dataOf(prepared);
    const uploaded = await put(apps, file, PDF);
    expect(uploaded.headers.get('ratelimit-remaining')).to.equal(null);
    for (const [method, path] of [
      ['POST', `/api/v1/files/${file.file_key}/complete`],
      ['GET', `/api/v1/files/${file.file_key}`],
      ['GET', '/api/v1/files'],
      ['DELETE', `/api/v1/files/${file.file_key}`],
    ] as const) {
      const answer = await call(apps.url, method, path, { headers: key });
      expect(answer.status, `${method} ${path}: ${answer.text}`).to.be.below(300);
      expectRateLimitHeaders(answer, true);
      expect(remaining(answer), `${method} ${path}`).to.equal(last - 1);
      last = remaining(answer);
    }
  });

  it('refuses a bad prepare naming the field: a path separator, a size over files.max_bytes, a malformed sha256; a token without files:write', async function () {
    const named = async (body: Record<string, unknown>, path: string): Promise<void> => {
      const answer = await prepare({ file_name: 'a.pdf', content_type: 'application/pdf', size_bytes: 10, ...body });
      checker.expectDocumented('/api/v1/files', 'POST', answer);
      expect(expectProblem(answer, 400, 'validation_failed').errors?.map((e) => e.path)).to.deep.equal([path]);
    };
    await named({ file_name: '../etc/passwd' }, '/file_name');
    await named({ file_name: 'a\\b.pdf' }, '/file_name');
    await named({ file_name: 'a\u0000.pdf' }, '/file_name');
    await named({ size_bytes: 1024 * 1024 + 1 }, '/size_bytes');
    await named({ size_bytes: 0 }, '/size_bytes');
    await named({ sha256: 'ABC' }, '/sha256');
    expectProblem(await prepare({ file_name: 'a.pdf', content_type: 'application/pdf', size_bytes: 10 }, bearer(SECRETS.tokenWrite)), 403, 'insufficient_scope');
    expect((await prepare({ file_name: 'a.pdf', content_type: 'application/pdf', size_bytes: 10 }, bearer(SECRETS.tokenFiles))).status).to.equal(201);
  });

  it('an upload address changed or expired → 403 upload_url_invalid; another file key in a valid address → 403', async function () {
    const file = dataOf(await prepare({ file_name: 'a.pdf', content_type: 'application/pdf', size_bytes: PDF.length }));
    // The signature's first character changed (to B when it is A: a signature starting with A was left as it was, 1 run in 64).
    const tampered = { ...file, upload_url: file.upload_url.replace(/signature=(.)/u, (_, first: string) => `signature=${first === 'A' ? 'B' : 'A'}`) };
    expect(tampered.upload_url, 'the address tampered with').to.not.equal(file.upload_url);
    const refused = await put(apps, tampered, PDF);
    checker.expectDocumented('/api/v1/files/{file_key}/upload', 'PUT', refused);
    expectProblem(refused, 403, 'upload_url_invalid');
    const other = dataOf(await prepare({ file_name: 'b.pdf', content_type: 'application/pdf', size_bytes: PDF.length }));
    expectProblem(await put(apps, { ...file, upload_url: file.upload_url.replace(file.file_key, other.file_key) }, PDF), 403, 'upload_url_invalid');
    expectProblem(await put(apps, { ...file, upload_url: file.upload_url.replace(/expires=[0-9]+/u, 'expires=9999999999') }, PDF), 403, 'upload_url_invalid');
    expect(await apps.world.files.store.examine(file.file_key)).to.equal(undefined);

    const expiring = await startApps({ files: { uploadTtlMs: 1 } });
    try {
      const prepared = dataOf(await call(expiring.url, 'POST', '/api/v1/files', { headers: key, json: { file_name: 'a.pdf', content_type: 'application/pdf', size_bytes: PDF.length } }));
      const late = await put(expiring, prepared, PDF);
      expect(expectProblem(late, 403, 'upload_url_invalid').detail).to.match(/expired/u);
    } finally {
      await expiring.close();
    }
  });

  it('a body longer than size_bytes → 413 and nothing past it is written; shorter → 400; both keep nothing and the file stays pending', async function () {
    const file = dataOf(await prepare({ file_name: 'a.pdf', content_type: 'application/pdf', size_bytes: PDF.length }));
    const byLength = await put(apps, file, Buffer.concat([PDF, Buffer.from('x')]));
    checker.expectDocumented('/api/v1/files/{file_key}/upload', 'PUT', byLength);
    expectProblem(byLength, 413, 'upload_too_large');
    const chunked = await putChunked(apps, file, [PDF, Buffer.alloc(64 * 1024, 1)]);
    expect(chunked.status, chunked.body).to.equal(413);
    expect(JSON.parse(chunked.body)).to.include({ code: 'upload_too_large' });
    const short = await put(apps, file, PDF.subarray(0, 10));
    checker.expectDocumented('/api/v1/files/{file_key}/upload', 'PUT', short);
    expectProblem(short, 400, 'upload_size_mismatch');
    const shortChunked = await putChunked(apps, file, [PDF.subarray(0, 10)]);
    expect(shortChunked.status).to.equal(400);
    expect(await apps.world.files.store.examine(file.file_key)).to.equal(undefined);
    const early = await call(apps.url, 'POST', `/api/v1/files/${file.file_key}/complete`, { headers: key });
    checker.expectDocumented('/api/v1/files/{file_key}/complete', 'POST', early);
    expectProblem(early, 409, 'file_not_uploaded');
    expect(dataOf(await call(apps.url, 'GET', `/api/v1/files/${file.file_key}`, { headers: key })).status).to.equal('pending');
  });

  it('complete rejects a wrong digest and a type the bytes contradict, keeping no bytes; an upload after complete → 409', async function () {
    const wrongDigest = dataOf(await prepare({ file_name: 'a.pdf', content_type: 'application/pdf', size_bytes: PDF.length, sha256: sha256(PNG) }));
    await put(apps, wrongDigest, PDF);
    const rejected = dataOf(await call(apps.url, 'POST', `/api/v1/files/${wrongDigest.file_key}/complete`, { headers: key }));
    expect(rejected.status).to.equal('rejected');
    expect(rejected.reason).to.match(/SHA-256/u);
    expect(await apps.world.files.store.examine(wrongDigest.file_key)).to.equal(undefined);

    const pngAsPdf = dataOf(await prepare({ file_name: 'a.pdf', content_type: 'application/pdf', size_bytes: PNG.length }));
    await put(apps, pngAsPdf, PNG);
    const contradicted = dataOf(await call(apps.url, 'POST', `/api/v1/files/${pngAsPdf.file_key}/complete`, { headers: key }));
    expect(contradicted).to.include({ status: 'rejected' });
    expect(contradicted.reason).to.include('image/png');
    const textAsPdf = dataOf(await prepare({ file_name: 'a.pdf', content_type: 'application/pdf', size_bytes: 5 }));
    await put(apps, textAsPdf, 'hello');
    expect(dataOf(await call(apps.url, 'POST', `/api/v1/files/${textAsPdf.file_key}/complete`, { headers: key })).status).to.equal('rejected');
    // A type file-type cannot sniff is taken as declared.
    const csv = await readyFile(Buffer.from('id,total\n1,9.50\n'), 'totals.csv', 'text/csv');
    expect(csv.status).to.equal('ready');
    const again = await put(apps, { ...pngAsPdf }, PNG);
    expectProblem(again, 409, 'file_not_pending');
  });

  it("run start: an unknown key, another account's, a pending or rejected one, or another name → 400 naming /files/N/file_key", async function () {
    const ready = await readyFile();
    const pending = dataOf(await prepare({ file_name: 'p.pdf', content_type: 'application/pdf', size_bytes: PDF.length }));
    const foreign = dataOf(await prepare({ file_name: 'invoice.pdf', content_type: 'application/pdf', size_bytes: PDF.length }, keyB));
    const start = (files: unknown[], background: unknown[] = []): Promise<Answer> =>
      call(apps.url, 'POST', runPath(), { headers: key, json: { files, ...(background.length > 0 ? { background_files: background } : {}) } });
    const ref = (fileKey: string, name = 'invoice.pdf', type = 'application/pdf'): Record<string, string> => ({ file_key: fileKey, file_name: name, content_type: type });
    const refused = async (answer: Answer, paths: string[]): Promise<string[]> => {
      const problem = expectProblem(answer, 400, 'validation_failed');
      expect(problem.errors?.map((e) => e.path)).to.deep.equal(paths);
      return problem.errors?.map((e) => e.message) ?? [];
    };
    const [unknownMessage] = await refused(await start([ref('file_00000000000000000000000000000000')]), ['/files/0/file_key']);
    const [foreignMessage] = await refused(await start([ref(foreign.file_key)]), ['/files/0/file_key']);
    expect(foreignMessage).to.equal(unknownMessage);
    expect(await refused(await start([ref(ready.file_key), ref(pending.file_key, 'p.pdf')]), ['/files/1/file_key'])).to.deep.equal(['names a file that is pending, not ready']);
    await refused(await start([ref(ready.file_key, 'other.pdf')]), ['/files/0/file_key']);
    await refused(await start([ref(ready.file_key, 'invoice.pdf', 'image/png')]), ['/files/0/file_key']);
    await refused(await start([ref(ready.file_key)], [ref('nope')]), ['/background_files/0/file_key']);
    expect(apps.world.queue.size).to.equal(0);
    expect((await start([ref(ready.file_key, 'invoice.pdf', 'Application/PDF; x=1')])).status).to.equal(202);
    expect(ACCOUNT_B).to.not.equal('');
  });
});
