import { expect } from 'chai';
import { DemoRunProcessor } from '@svc/adapter-queue';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { createCore, inProcessPrincipal, InMemoryFileCatalog, InMemoryFileStore, NO_RUN_FILES, RunFailedError, StoredRunFiles, type ProgressReport, type Run, type RunFileSource, type RunProcessingContext } from '@svc/core';
import { aRun } from '@svc/core/testing';

function contextWith(signal: AbortSignal, reports: ProgressReport[], run: Run = aRun(), files: RunFileSource = NO_RUN_FILES): RunProcessingContext {
  return { signal, attempt: 1, maxAttempts: 3, reportProgress: (p) => (reports.push(p), Promise.resolve(true)), files: files.forRun(run) };
}

// docs/CONTRACT.md "Runs lifecycle": the demo processor takes `worker.demo_delay_ms` and
// honours the AbortSignal at once.
describe('DemoRunProcessor', function () {
  it('reports progress and succeeds with an output after its delay', async function () {
    const reports: ProgressReport[] = [];
    const result = await new DemoRunProcessor({ delayMs: 1 }).process(aRun({ request: { kind: 'message', message: 'hello' } }), contextWith(new AbortController().signal, reports));
    expect(result).to.deep.equal({ ok: true, output: { demo: true, files: 0, message_characters: 5, read_files: [] } });
    expect(reports).to.deep.equal([{ percent: 0, message: 'Started.' }, { percent: 100, message: 'Done.' }]);
  });

  it('stops at once when the signal aborts, rejecting with an AbortError caused by its reason', async function () {
    const stop = new AbortController();
    const processing = new DemoRunProcessor({ delayMs: 60_000 }).process(aRun(), contextWith(stop.signal, []));
    const reason = new Error('worker stopping');
    const started = Date.now();
    stop.abort(reason);
    let thrown: unknown;
    await processing.catch((error: unknown) => (thrown = error));
    expect(thrown).to.have.property('name', 'AbortError');
    expect(thrown).to.have.property('cause', reason);
    expect(Date.now() - started, 'not the 60 s delay').to.be.below(5_000);
  });

  it("reads each of the run's files as a stream and names its size and SHA-256 (docs/CONTRACT.md \"Files\")", async function () {
    const files = { catalog: new InMemoryFileCatalog(), store: new InMemoryFileStore() };
    const core = createCore({ fileCatalog: files.catalog, fileStore: files.store }, { baseUrl: 'http://127.0.0.1' });
    const bytes = Buffer.from('id,total\n1,9.50\n');
    const prepared = await core.prepareFile.execute({ principal: inProcessPrincipal('acme'), body: { file_name: 't.csv', content_type: 'text/csv', size_bytes: bytes.length } });
    if (!prepared.ok) throw new Error(prepared.error.detail);
    const fileKey = prepared.value.file.file_key;
    await files.store.write(fileKey, Readable.from([bytes]), bytes.length);
    expect((await core.completeFile.execute({ principal: inProcessPrincipal('acme'), fileKey })).ok).to.equal(true);
    const reference = { file_key: fileKey, file_name: 't.csv', content_type: 'text/csv' };
    const run = aRun({ accountId: 'acme', request: { kind: 'files', files: [reference], processTogether: false, backgroundFiles: [] } });
    const result = await new DemoRunProcessor({ delayMs: 1 }).process(run, contextWith(new AbortController().signal, [], run, new StoredRunFiles(files)));
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    expect(result).to.deep.equal({ ok: true, output: { demo: true, files: 1, message_characters: 0, read_files: [{ ...reference, size_bytes: bytes.length, sha256 }] } });
    // Another account's run naming the same key cannot read it.
    const foreign = aRun({ accountId: 'other', request: run.request });
    const refused = await new DemoRunProcessor({ delayMs: 1 }).process(foreign, contextWith(new AbortController().signal, [], foreign, new StoredRunFiles(files))).catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(RunFailedError);
    await core.close();
  });
});
