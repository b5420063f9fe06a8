import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { createCore, InMemoryAgentCatalog, InMemoryFileCatalog, InMemoryFileStore, inProcessPrincipal, ManualClock, type Core } from '@svc/core';

const ACCOUNT = 'acct_files';
const AGENT = 'agent_files';
const CSV = Buffer.from('id,total\n1,9.50\n');
const DAY_MS = 86_400_000;

// docs/CONTRACT.md "Files": the file use cases on the in-memory catalog and store, on a manual clock.
describe('file use cases (core)', function () {
  let clock: ManualClock;
  let files: { catalog: InMemoryFileCatalog; store: InMemoryFileStore };
  let core: Core;
  const principal = inProcessPrincipal(ACCOUNT);

  beforeEach(function () {
    clock = new ManualClock();
    files = { catalog: new InMemoryFileCatalog(), store: new InMemoryFileStore() };
    core = createCore({ clock, fileCatalog: files.catalog, fileStore: files.store, agents: new InMemoryAgentCatalog([{ agentId: AGENT, accountId: ACCOUNT }]) }, { baseUrl: 'http://127.0.0.1', files: { retentionDays: 7, uploadTtlMs: 3_600_000 } });
  });
  afterEach(async function () {
    await core.close();
  });

  async function readyFile(): Promise<string> {
    const prepared = await core.prepareFile.execute({ principal, body: { file_name: 't.csv', content_type: 'text/csv', size_bytes: CSV.length, sha256: createHash('sha256').update(CSV).digest('hex') } });
    if (!prepared.ok) throw new Error(prepared.error.detail);
    const fileKey = prepared.value.file.file_key;
    expect((await files.store.write(fileKey, Readable.from([CSV]), CSV.length)).kind).to.equal('stored');
    const done = await core.completeFile.execute({ principal, fileKey });
    expect(done.ok && done.value.status).to.equal('ready');
    return fileKey;
  }
  const startWith = (fileKey: string) =>
    core.startRun.execute({ principal, agentId: AGENT, body: { files: [{ file_key: fileKey, file_name: 't.csv', content_type: 'text/csv' }] } });

  it('a pending file expires at the end of its upload address: read as expired at once, swept (bytes removed) by ExpireFiles', async function () {
    const prepared = await core.prepareFile.execute({ principal, body: { file_name: 't.csv', content_type: 'text/csv', size_bytes: CSV.length } });
    if (!prepared.ok) throw new Error(prepared.error.detail);
    const fileKey = prepared.value.file.file_key;
    await files.store.write(fileKey, Readable.from([CSV]), CSV.length);
    clock.advanceMs(3_600_000);
    const got = await core.getFile.execute({ principal, fileKey });
    expect(got.ok && got.value).to.include({ status: 'expired' });
    expect(await core.expireFiles.execute()).to.deep.equal({ expired: 1, kept: 0 });
    expect((await files.catalog.get(fileKey))?.status).to.equal('expired');
    expect(await files.store.examine(fileKey)).to.equal(undefined);
    const late = await core.completeFile.execute({ principal, fileKey });
    expect(!late.ok && late.error.code).to.equal('file_not_pending');
    expect(await core.expireFiles.execute()).to.deep.equal({ expired: 0, kept: 0 });
  });

  it('a ready file lives retention_days after its last use; a live run keeps it; once the run ended it expires', async function () {
    const fileKey = await readyFile();
    clock.advanceMs(6 * DAY_MS);
    const started = await startWith(fileKey);
    if (!started.ok) throw new Error(started.error.detail);
    // Used on day 6: kept until day 13.
    clock.advanceMs(6 * DAY_MS);
    expect(await core.expireFiles.execute()).to.deep.equal({ expired: 0, kept: 0 });
    clock.advanceMs(1 * DAY_MS);
    // Day 13: due, but its run is still queued: kept another 7 days.
    expect(await core.expireFiles.execute()).to.deep.equal({ expired: 0, kept: 1 });
    const inUse = await core.deleteFile.execute({ principal, fileKey });
    expect(!inUse.ok && inUse.error.code).to.equal('file_in_use');
    expect((await core.cancelRun.execute({ principal, runId: started.value.run_id })).ok).to.equal(true);
    clock.advanceMs(7 * DAY_MS);
    expect(await core.expireFiles.execute()).to.deep.equal({ expired: 1, kept: 0 });
    const refused = await startWith(fileKey);
    expect(!refused.ok && refused.error.errors).to.deep.equal([{ path: '/files/0/file_key', message: 'names a file that is expired, not ready' }]);
  });

  it('defaults (docs/CONTRACT.md "Files"): an upload address and a pending file live 1 h; a ready file 7 days; files.max_bytes 100 MiB', async function () {
    const plain = createCore({ clock, fileCatalog: new InMemoryFileCatalog(), fileStore: files.store }, { baseUrl: 'http://127.0.0.1' });
    const tooLarge = await plain.prepareFile.execute({ principal, body: { file_name: 'big.bin', content_type: 'application/octet-stream', size_bytes: 100 * 1024 * 1024 + 1 } });
    expect(!tooLarge.ok && tooLarge.error.errors).to.deep.equal([{ path: '/size_bytes', message: 'must be at most 104857600 bytes (files.max_bytes)' }]);
    const prepared = await plain.prepareFile.execute({ principal, body: { file_name: 't.csv', content_type: 'text/csv', size_bytes: CSV.length } });
    if (!prepared.ok) throw new Error(prepared.error.detail);
    const { file } = prepared.value;
    expect(Date.parse(file.expires_at) - Date.parse(file.created_at)).to.equal(3_600_000);
    expect(new URL(file.upload_url ?? '').searchParams.get('expires')).to.equal(String(Date.parse(file.expires_at) / 1000));
    await files.store.write(file.file_key, Readable.from([CSV]), CSV.length);
    clock.advanceMs(1000);
    const done = await plain.completeFile.execute({ principal, fileKey: file.file_key });
    expect(done.ok && Date.parse(done.value.expires_at)).to.equal(clock.now().getTime() + 7 * DAY_MS);
    await plain.close();
  });

  it('verify_keys false (embedders whose files live elsewhere) takes any key as it is', async function () {
    const opaque = createCore({ agents: new InMemoryAgentCatalog([{ agentId: AGENT, accountId: ACCOUNT }]) }, { baseUrl: 'http://127.0.0.1', files: { verifyKeys: false } });
    const any = await opaque.startRun.execute({ principal, agentId: AGENT, body: { files: [{ file_key: 'elsewhere/1.pdf', file_name: '1.pdf', content_type: 'application/pdf' }] } });
    expect(any.ok).to.equal(true);
    await opaque.close();
  });
});
