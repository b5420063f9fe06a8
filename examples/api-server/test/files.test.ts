import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { eventually } from '@svc/core/testing';
import { AGENTS, addresses, e2eConfig, SECRETS } from './support/fixture.js';
import { apiKey, call, expectData, expectProblem } from '../../../tools/test-support/http.js';
import { deleteKeys, REDIS_URL, redisOrSkip, uniquePrefix } from '../../../tools/test-support/redis.js';
import { startS3rver } from '../../../tools/test-support/s3rver.js';
import { freePort, startServerProcess, tempDir, writeConfig, type ServerProcess } from './support/server-process.js';

const key = apiKey(SECRETS.keyA);
/** A small PDF (`file-type` knows it by its signature). */
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n', 'latin1');
const BUCKET = 'svc-e2e-files';
// s3rver checks the access key id (S3RVER) but no signature: any secret key serves, and one unlike the id keeps the leak scan meaningful.
const S3_SECRET = 'svc-e2e-s3-secret-access-key-7Hq2';

interface FileData {
  readonly file_key: string;
  readonly status: string;
  readonly upload_url: string;
  readonly upload_headers: Record<string, string>;
  readonly sha256: string | null;
}

interface RunData {
  readonly status: string;
  readonly output?: { read_files?: { file_key: string; size_bytes: number; sha256: string }[] };
}

/** Prepare, PUT, complete and start a run with `bytes`, as a client of the API does; the run once final. */
async function uploadAndRun(server: ServerProcess, bytes: Buffer): Promise<{ file: FileData; uploadUrl: string; run: RunData }> {
  const prepared = expectData<FileData>(await call(server.url, 'POST', '/api/v1/files', { headers: key, json: { file_name: 'invoice.pdf', content_type: 'application/pdf', size_bytes: bytes.length } }), 201);
  const put = await fetch(prepared.upload_url, { method: 'PUT', headers: prepared.upload_headers, body: bytes });
  expect(put.status, await put.clone().text()).to.equal(200);
  await put.arrayBuffer();
  const file = expectData<FileData>(await call(server.url, 'POST', `/api/v1/files/${prepared.file_key}/complete`, { headers: key }), 200);
  expect(file.status).to.equal('ready');
  const started = expectData<{ run_id: string }>(
    await call(server.url, 'POST', `/api/v1/agents/${AGENTS.main}/run`, { headers: key, json: { files: [{ file_key: file.file_key, file_name: 'invoice.pdf', content_type: 'application/pdf' }] } }),
    202,
  );
  let run: RunData | undefined;
  await eventually(
    async () => {
      run = expectData<RunData>(await call(server.url, 'GET', `/api/v1/runs/${started.run_id}`, { headers: key }), 200);
      return run.status === 'succeeded' || run.status === 'failed';
    },
    'the run is final',
    15_000,
    20,
  );
  expect(run?.status, JSON.stringify(run)).to.equal('succeeded');
  return { file, uploadUrl: prepared.upload_url, run: run as RunData };
}

describe('examples/api-server files (child process; docs/CONTRACT.md "Files")', function () {
  this.timeout(60_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: ServerProcess | undefined;

  beforeEach(async function () {
    dir = await tempDir();
  });
  afterEach(async function () {
    await server?.kill();
    server = undefined;
    await dir.remove();
  });

  it('local storage (the default): a PDF uploaded through the server, a run whose output names its size and SHA-256', async function () {
    const at = await addresses();
    server = await startServerProcess(await writeConfig(dir.path, e2eConfig(at, { worker: { enabled: true, demo_delay_ms: 1 }, files: { storage: { kind: 'local', directory: `${dir.path}/files` } } })), at.url, at.egressUrl);
    const { file, uploadUrl, run } = await uploadAndRun(server, PDF);
    expect(uploadUrl.startsWith(`${at.url}/api/v1/files/`)).to.equal(true);
    expect(run.output?.read_files).to.deep.equal([{ file_key: file.file_key, file_name: 'invoice.pdf', content_type: 'application/pdf', size_bytes: PDF.length, sha256: createHash('sha256').update(PDF).digest('hex') }]);
  });

  it('S3 storage (s3rver on loopback) and file records in Redis: the same, the upload going to S3 itself', async function () {
    const redis = await redisOrSkip(this);
    const prefix = uniquePrefix('files-e2e').replace(/:$/u, '');
    const s3 = await startS3rver(BUCKET);
    try {
      const at = await addresses();
      const config = e2eConfig(at, {
        redis_url: REDIS_URL,
        redis_prefix: prefix,
        worker: { enabled: true, demo_delay_ms: 1 },
        files: { storage: { kind: 's3', endpoint: s3.endpoint, bucket: BUCKET, access_key_id_env: 'SVC_E2E_S3_ID', secret_access_key_env: 'SVC_E2E_S3_SECRET' } },
      });
      server = await startServerProcess(await writeConfig(dir.path, config), at.url, at.egressUrl, 20_000, { SVC_E2E_S3_ID: 'S3RVER', SVC_E2E_S3_SECRET: S3_SECRET });
      const { file, uploadUrl, run } = await uploadAndRun(server, PDF);
      expect(uploadUrl.startsWith(`${s3.endpoint}/${BUCKET}/`)).to.equal(true);
      expect(run.output?.read_files?.[0]).to.include({ size_bytes: PDF.length, sha256: createHash('sha256').update(PDF).digest('hex') });
      expect(await redis.exists(`${prefix}:file:${file.file_key}`)).to.equal(1);
    } finally {
      await server?.kill();
      server = undefined;
      await s3.close();
      await deleteKeys(redis, `${prefix}:`);
      redis.disconnect();
    }
  });

  it('S3 unreachable: complete answers 503 with Retry-After and the file stays pending', async function () {
    const closed = await freePort();
    const at = await addresses();
    const config = e2eConfig(at, { dependency_timeout_ms: 1000, files: { storage: { kind: 's3', endpoint: `http://127.0.0.1:${closed}`, bucket: BUCKET, access_key_id_env: 'SVC_E2E_S3_ID', secret_access_key_env: 'SVC_E2E_S3_SECRET' } } });
    server = await startServerProcess(await writeConfig(dir.path, config), at.url, at.egressUrl, 20_000, { SVC_E2E_S3_ID: 'S3RVER', SVC_E2E_S3_SECRET: S3_SECRET });
    const prepared = expectData<FileData>(await call(server.url, 'POST', '/api/v1/files', { headers: key, json: { file_name: 'a.pdf', content_type: 'application/pdf', size_bytes: PDF.length } }), 201);
    const completed = await call(server.url, 'POST', `/api/v1/files/${prepared.file_key}/complete`, { headers: key });
    expectProblem(completed, 503, 'service_unavailable');
    expect(completed.headers.get('retry-after')).to.match(/^[0-9]+$/u);
    expect(expectData<FileData>(await call(server.url, 'GET', `/api/v1/files/${prepared.file_key}`, { headers: key }), 200).status).to.equal('pending');
  });
});
