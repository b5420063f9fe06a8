import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { FILE_HEAD_BYTES, type FileContentFacts, type FileStore } from '../ports/file-store.js';
import { resolveTestRunner, type TestRunner } from './test-runner.js';

/** What the {@link fileStoreContract} needs: a store (it may be shared: each test takes fresh file keys). */
export interface FileStoreHarness {
  readonly store: FileStore;
  /** Frees what the harness made (clients, directories); the suite has removed its files by then. */
  close(): Promise<void>;
}

/** A file key no other test uses: `file_` and 32 lowercase hex digits, like the core's. */
function aFileKey(): string {
  return `file_${randomBytes(16).toString('hex')}`;
}

/** `bytes` as a body of `chunkBytes`-byte chunks, as a request's body arrives. */
async function* bodyOf(bytes: Uint8Array, chunkBytes = 16 * 1024): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += chunkBytes) yield bytes.subarray(at, Math.min(at + chunkBytes, bytes.length));
}

/** The facts a store must measure of `bytes`. */
function factsOf(bytes: Uint8Array): FileContentFacts {
  return { sizeBytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), head: new Uint8Array(bytes.subarray(0, FILE_HEAD_BYTES)) };
}

/** Facts in a form `deepEqual` compares whatever array type `head` is. */
function comparable(facts: FileContentFacts | undefined): unknown {
  return facts === undefined ? undefined : { sizeBytes: facts.sizeBytes, sha256: facts.sha256, head: Buffer.from(facts.head).toString('hex') };
}

/** Every byte a stream yields. */
async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/**
 * The behaviour every {@link FileStore} shares (core `ports/file-store.ts`): a body of
 * exactly the declared size is kept with its size, SHA-256 and head; a longer or shorter
 * one, or an aborted write, keeps nothing (an earlier upload of the key stays as it was);
 * `commit` makes the upload what `open` reads, harmlessly twice, and refuses when nothing
 * was uploaded; `remove` deletes both, harmlessly when there is nothing. Each test uses
 * fresh file keys and removes them afterwards, so a harness may share one store (one
 * bucket, one directory) between tests. Registers a `describe` block with `runner`.
 *
 * @param name - suite title.
 * @param makeHarness - builds a fresh harness for each test (closed after it).
 * @param runner - the runner to register with ({@link TestRunner}); default mocha's globals.
 * @throws Error when `runner` is absent and there are no mocha globals ({@link resolveTestRunner}).
 */
export function fileStoreContract(name: string, makeHarness: () => Promise<FileStoreHarness>, runner?: TestRunner): void {
  const { describe, it, beforeEach, afterEach } = resolveTestRunner(runner, 'fileStoreContract');
  describe(`FileStore contract: ${name}`, function () {
    let h: FileStoreHarness;
    let used: string[] = [];
    /** A fresh key, removed after the test. */
    const fresh = (): string => {
      const key = aFileKey();
      used.push(key);
      return key;
    };
    beforeEach(async function () {
      used = [];
      h = await makeHarness();
    });
    afterEach(async function () {
      try {
        for (const key of used) await h.store.remove(key);
      } finally {
        await h.close();
      }
    });

    it('answers undefined from examine and open before any write', async function () {
      const key = fresh();
      assert.equal(await h.store.examine(key), undefined);
      assert.equal(await h.store.open(key), undefined);
    });

    it('stores a body of exactly the declared size, with its size, SHA-256 and first 4100 bytes', async function () {
      const key = fresh();
      const bytes = randomBytes(10_000);
      const outcome = await h.store.write(key, bodyOf(bytes, 3_000), bytes.length);
      assert.equal(outcome.kind, 'stored');
      assert.ok(outcome.kind === 'stored');
      assert.deepEqual(comparable(outcome.facts), comparable(factsOf(bytes)));
      assert.equal(outcome.facts.head.length, FILE_HEAD_BYTES);
      assert.deepEqual(comparable(await h.store.examine(key)), comparable(factsOf(bytes)));
    });

    it('keeps the whole of a body shorter than the head as its head', async function () {
      const key = fresh();
      const bytes = new TextEncoder().encode('%PDF-1.7\n');
      const outcome = await h.store.write(key, bodyOf(bytes), bytes.length);
      assert.ok(outcome.kind === 'stored');
      assert.deepEqual(comparable(await h.store.examine(key)), comparable(factsOf(bytes)));
      assert.equal(Buffer.from((await h.store.examine(key))?.head ?? []).toString('utf8'), '%PDF-1.7\n');
    });

    it('answers too_large for a body longer than declared and keeps nothing of it; an earlier upload stays as it was', async function () {
      const key = fresh();
      assert.deepEqual(await h.store.write(key, bodyOf(randomBytes(1001)), 1000), { kind: 'too_large' });
      // Exactly the declared size first, then one byte more, alone: the store must wait for the end.
      assert.deepEqual(await h.store.write(key, bodyOf(randomBytes(1001), 500), 1000), { kind: 'too_large' });
      assert.equal(await h.store.examine(key), undefined);
      const earlier = randomBytes(1000);
      assert.equal((await h.store.write(key, bodyOf(earlier), 1000)).kind, 'stored');
      assert.deepEqual(await h.store.write(key, bodyOf(randomBytes(5000), 700), 1000), { kind: 'too_large' });
      assert.deepEqual(comparable(await h.store.examine(key)), comparable(factsOf(earlier)));
    });

    it('answers too_short for a body shorter than declared and keeps nothing of it; an earlier upload stays as it was', async function () {
      const key = fresh();
      assert.deepEqual(await h.store.write(key, bodyOf(randomBytes(999)), 1000), { kind: 'too_short' });
      assert.equal(await h.store.examine(key), undefined);
      const earlier = randomBytes(1000);
      assert.equal((await h.store.write(key, bodyOf(earlier), 1000)).kind, 'stored');
      assert.deepEqual(await h.store.write(key, bodyOf(new Uint8Array(0)), 1000), { kind: 'too_short' });
      assert.deepEqual(comparable(await h.store.examine(key)), comparable(factsOf(earlier)));
    });

    it('rejects an aborted write with the signal’s reason and keeps nothing of it', async function () {
      const key = fresh();
      const controller = new AbortController();
      const reason = new Error('the client went away');
      const bytes = randomBytes(256 * 1024);
      async function* abortedMidway(): AsyncGenerator<Uint8Array> {
        yield bytes.subarray(0, 64 * 1024);
        controller.abort(reason);
        // The rest still arrives: a store may notice the abort between chunks or at once.
        yield* bodyOf(bytes.subarray(64 * 1024));
      }
      await assert.rejects(h.store.write(key, abortedMidway(), bytes.length, controller.signal), (error) => error === reason);
      assert.equal(await h.store.examine(key), undefined);
      assert.equal(await h.store.open(key), undefined);
    });

    it('replaces an earlier upload of the key with a new body of the declared size', async function () {
      const key = fresh();
      const [first, second] = [randomBytes(5000), randomBytes(7000)];
      assert.equal((await h.store.write(key, bodyOf(first), first.length)).kind, 'stored');
      assert.equal((await h.store.write(key, bodyOf(second), second.length)).kind, 'stored');
      assert.deepEqual(comparable(await h.store.examine(key)), comparable(factsOf(second)));
    });

    it('answers undefined from open for uploaded bytes that were not committed', async function () {
      const key = fresh();
      const bytes = randomBytes(100);
      assert.equal((await h.store.write(key, bodyOf(bytes), bytes.length)).kind, 'stored');
      assert.equal(await h.store.open(key), undefined);
    });

    it('streams the committed bytes from open, and examine then answers their facts', async function () {
      const key = fresh();
      const bytes = randomBytes(20_000);
      assert.equal((await h.store.write(key, bodyOf(bytes), bytes.length)).kind, 'stored');
      await h.store.commit(key);
      const stream = await h.store.open(key);
      assert.ok(stream !== undefined);
      assert.ok((await readAll(stream)).equals(bytes));
      assert.deepEqual(comparable(await h.store.examine(key)), comparable(factsOf(bytes)));
    });

    it('takes a second commit harmlessly', async function () {
      const key = fresh();
      const bytes = randomBytes(300);
      assert.equal((await h.store.write(key, bodyOf(bytes), bytes.length)).kind, 'stored');
      await h.store.commit(key);
      await h.store.commit(key);
      const stream = await h.store.open(key);
      assert.ok(stream !== undefined);
      assert.ok((await readAll(stream)).equals(bytes));
    });

    it('rejects a commit when nothing was uploaded', async function () {
      await assert.rejects(h.store.commit(fresh()), Error);
    });

    it('keeps reading the committed bytes while a new upload waits, until it is committed', async function () {
      const key = fresh();
      const [first, second] = [randomBytes(3000), randomBytes(4000)];
      assert.equal((await h.store.write(key, bodyOf(first), first.length)).kind, 'stored');
      await h.store.commit(key);
      assert.equal((await h.store.write(key, bodyOf(second), second.length)).kind, 'stored');
      assert.deepEqual(comparable(await h.store.examine(key)), comparable(factsOf(second)));
      const before = await h.store.open(key);
      assert.ok(before !== undefined);
      assert.ok((await readAll(before)).equals(first));
      await h.store.commit(key);
      const after = await h.store.open(key);
      assert.ok(after !== undefined);
      assert.ok((await readAll(after)).equals(second));
    });

    it('removes the uploaded and the committed bytes: examine and open answer undefined, commit rejects', async function () {
      const key = fresh();
      const [first, second] = [randomBytes(2000), randomBytes(2500)];
      assert.equal((await h.store.write(key, bodyOf(first), first.length)).kind, 'stored');
      await h.store.commit(key);
      assert.equal((await h.store.write(key, bodyOf(second), second.length)).kind, 'stored');
      await h.store.remove(key);
      assert.equal(await h.store.examine(key), undefined);
      assert.equal(await h.store.open(key), undefined);
      await assert.rejects(h.store.commit(key), Error);
    });

    it('takes the removal of a key it never held harmlessly', async function () {
      const key = fresh();
      await h.store.remove(key);
      await h.store.remove(key);
      assert.equal(await h.store.examine(key), undefined);
    });

    it('keeps files apart: writing, committing and removing one key leaves another as it was', async function () {
      const [a, b] = [fresh(), fresh()];
      const [bytesA, bytesB] = [randomBytes(1500), randomBytes(1600)];
      assert.equal((await h.store.write(a, bodyOf(bytesA), bytesA.length)).kind, 'stored');
      assert.equal((await h.store.write(b, bodyOf(bytesB), bytesB.length)).kind, 'stored');
      await h.store.commit(a);
      assert.equal(await h.store.open(b), undefined);
      await h.store.remove(a);
      assert.deepEqual(comparable(await h.store.examine(b)), comparable(factsOf(bytesB)));
    });

    it('streams a 3 MiB body of 64 KiB chunks through, and open gives back the same bytes', async function () {
      const key = fresh();
      const bytes = randomBytes(3 * 1024 * 1024);
      const outcome = await h.store.write(key, bodyOf(bytes, 64 * 1024), bytes.length);
      assert.ok(outcome.kind === 'stored');
      assert.deepEqual(comparable(outcome.facts), comparable(factsOf(bytes)));
      await h.store.commit(key);
      const stream = await h.store.open(key);
      assert.ok(stream !== undefined);
      const read = await readAll(stream);
      assert.equal(read.length, bytes.length);
      assert.ok(read.equals(bytes));
    });
  });
}
