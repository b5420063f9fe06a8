import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { fileListKey, MAX_FILE_RUN_IDS, type FileStatus, type StoredFile } from '../domain/stored-file.js';
import type { FileCatalog, FileListFilter } from '../ports/file-catalog.js';
import { resolveTestRunner, type TestRunner } from './test-runner.js';

/** What the {@link fileCatalogContract} needs: a catalog. */
export interface FileCatalogHarness {
  /**
   * A catalog that holds no file: a fresh one for each test, because `due` answers the
   * files of every account (a Redis catalog on a key prefix of its own is fresh).
   */
  readonly catalog: FileCatalog;
  /** Frees keys and clients. */
  close(): Promise<void>;
}

/** Most pages a listing follows before calling the paging endless. */
const MAX_PAGES = 200;

/** A file key no other test uses: `file_` and 32 lowercase hex digits, as core mints them. */
function contractFileKey(): string {
  return `file_${randomUUID().replace(/-/gu, '')}`;
}

/** An account id no other test uses, so that a list holds this test's files only. */
function contractAccountId(): string {
  return `file-contract-acct-${randomUUID()}`;
}

/** A `pending` file with the required fields only (no `sha256`, `reason` nor `completedAt`), under a fresh key; override any member. */
function aStoredFile(overrides: Partial<StoredFile> = {}): StoredFile {
  return {
    fileKey: contractFileKey(),
    accountId: 'file-contract-acct',
    fileName: 'report.pdf',
    contentType: 'application/pdf',
    sizeBytes: 1024,
    status: 'pending',
    createdAt: new Date('2026-03-01T10:00:00.123Z'),
    expiresAt: new Date('2026-03-01T11:00:00.123Z'),
    runIds: [],
    ...overrides,
  };
}

/** The fields of a `ready` file, as `complete` leaves it. */
const READY: Partial<StoredFile> = {
  status: 'ready',
  sha256: 'a'.repeat(64),
  completedAt: new Date('2026-03-01T10:05:00.456Z'),
  expiresAt: new Date('2026-03-08T10:05:00.456Z'),
};

/** Compares list keys as UTF-8 bytes, the order the port lists in. */
const byListKey = (a: StoredFile, b: StoredFile): number => Buffer.compare(Buffer.from(fileListKey(a)), Buffer.from(fileListKey(b)));
const keysOf = (files: readonly (StoredFile | undefined)[]): (string | undefined)[] => files.map((f) => f?.fileKey);

/**
 * The behaviour every {@link FileCatalog} shares (core `ports/file-catalog.ts`): unknown
 * keys are absent; `create` keeps every field as given (Dates to the millisecond,
 * optional fields absent stay absent) and rejects a key given twice; `replace` is a
 * compare-and-set on the status that keeps `runIds`, of which exactly one of concurrent
 * calls applies; `addRun` only on a `ready` file, appending and trimming to core
 * `MAX_FILE_RUN_IDS` and extending `expiresAt` only when later; `list` pages through one
 * account's files newest first (core `fileListKey`), filtered by status, without a gap,
 * a repeat or another account's file, from any position; `remove`; `due` answers the
 * `pending` and `ready` files whose `expiresAt` is not after `now`, soonest first, at most
 * `limit`. Registers a `describe` block with `runner`.
 *
 * @param name - suite title.
 * @param makeHarness - builds a fresh harness, with an empty catalog, for each test (closed after it).
 * @param runner - the runner to register with ({@link TestRunner}); default mocha's globals.
 * @throws Error when `runner` is absent and there are no mocha globals ({@link resolveTestRunner}).
 */
export function fileCatalogContract(name: string, makeHarness: () => Promise<FileCatalogHarness>, runner?: TestRunner): void {
  const { describe, it, beforeEach, afterEach } = resolveTestRunner(runner, 'fileCatalogContract');
  describe(`FileCatalog contract: ${name}`, function () {
    let h: FileCatalogHarness;
    beforeEach(async function () {
      h = await makeHarness();
    });
    afterEach(async function () {
      await h.close();
    });

    /** Creates a file with `overrides` under a fresh key and returns it. */
    async function given(overrides: Partial<StoredFile> = {}): Promise<StoredFile> {
      const file = aStoredFile(overrides);
      await h.catalog.create(file);
      return file;
    }

    /** Creates files of `accountId`, one a second from 2026-03-01 on (the last newest), with `overrides` per file. */
    async function givenList(accountId: string, overrides: readonly Partial<StoredFile>[]): Promise<StoredFile[]> {
      const created: StoredFile[] = [];
      for (const [i, o] of overrides.entries()) created.push(await given({ accountId, createdAt: new Date(Date.UTC(2026, 2, 1, 0, 0, i)), ...o }));
      return created;
    }

    /** Follows `next` from the first page (or the one after `from`) to the last: the pages' files, in order. */
    async function listAll(accountId: string, filter: FileListFilter, limit: number, from?: string): Promise<{ files: StoredFile[]; pages: number }> {
      const files: StoredFile[] = [];
      let after: string | undefined = from;
      for (let pages = 1; pages <= MAX_PAGES; pages += 1) {
        const page = await h.catalog.list(accountId, filter, { limit, ...(after === undefined ? {} : { after }) });
        assert.ok(page.items.length <= limit, `page ${pages}: ${page.items.length} files, over the limit ${limit}`);
        files.push(...page.items);
        if (page.next === undefined) return { files, pages };
        after = page.next;
      }
      throw new Error(`list of ${accountId} still had a next page after ${MAX_PAGES} pages`);
    }

    const newestFirst = (files: readonly StoredFile[]): StoredFile[] => [...files].sort(byListKey);

    it('get: answers undefined for an unknown key', async function () {
      assert.equal(await h.catalog.get(contractFileKey()), undefined);
    });

    it('create and get: every field as given, Dates to the millisecond; optional fields absent stay absent', async function () {
      const full = await given({
        ...READY,
        fileName: 'Rapport été 2026 (final) ✓.pdf',
        contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        sizeBytes: 104_857_600,
        reason: 'kept as given',
        runIds: ['run-1', 'run-2'],
      });
      const read = await h.catalog.get(full.fileKey);
      assert.deepEqual(read, full);
      assert.ok(read?.createdAt instanceof Date && read.expiresAt instanceof Date && read.completedAt instanceof Date, 'Dates are answered as Dates');
      assert.equal(read.completedAt.getTime(), Date.parse('2026-03-01T10:05:00.456Z'));

      const minimal = await given();
      const readMinimal = await h.catalog.get(minimal.fileKey);
      assert.deepEqual(readMinimal, minimal);
      for (const field of ['sha256', 'reason', 'completedAt'] as const) {
        assert.equal(readMinimal !== undefined && field in readMinimal, false, `${field} is absent, not undefined`);
      }
      assert.deepEqual(readMinimal?.runIds, []);
    });

    it('create: rejects a key given twice, and keeps the first record', async function () {
      const first = await given();
      await assert.rejects(h.catalog.create({ ...first, fileName: 'second.pdf', status: 'ready' }));
      assert.deepEqual(await h.catalog.get(first.fileKey), first);
    });

    it('replace: applies when the status is the one expected, replaces the whole record, keeps runIds as stored', async function () {
      const file = await given({ ...READY, reason: 'an earlier reason', runIds: ['run-kept'] });
      const next: StoredFile = { ...aStoredFile({ fileKey: file.fileKey, accountId: file.accountId, createdAt: file.createdAt }), status: 'expired', expiresAt: new Date('2026-03-09T00:00:00.001Z'), runIds: ['run-ignored'] };
      const outcome = await h.catalog.replace(next, 'ready');
      const expected: StoredFile = { ...next, runIds: ['run-kept'] };
      assert.deepEqual(outcome, { applied: true, file: expected });
      const read = await h.catalog.get(file.fileKey);
      assert.deepEqual(read, expected, 'the outcome is what the catalog now holds');
      for (const field of ['sha256', 'reason', 'completedAt'] as const) assert.equal(read !== undefined && field in read, false, `${field} is gone with the record it was in`);
    });

    it('replace: applies nothing when the status is another one, and answers the record as found', async function () {
      const file = await given();
      for (const expected of ['ready', 'rejected', 'expired'] as const) {
        const outcome = await h.catalog.replace({ ...file, ...READY }, expected);
        assert.deepEqual(outcome, { applied: false, file }, `expected ${expected}`);
      }
      assert.deepEqual(await h.catalog.get(file.fileKey), file);
    });

    it('replace: of a missing file applies nothing and creates nothing', async function () {
      const missing = aStoredFile();
      assert.deepEqual(await h.catalog.replace({ ...missing, ...READY }, 'pending'), { applied: false, file: undefined });
      assert.equal(await h.catalog.get(missing.fileKey), undefined);
      assert.deepEqual(await h.catalog.list(missing.accountId, {}, { limit: 10 }), { items: [] });
    });

    it('replace: of 10 concurrent replaces from pending, exactly one applies; every other answers the record it left', async function () {
      for (let round = 0; round < 3; round += 1) {
        const file = await given({ accountId: contractAccountId() });
        const outcomes = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            h.catalog.replace(i % 2 === 0 ? { ...file, ...READY, fileName: `racer-${i}.pdf` } : { ...file, status: 'rejected', reason: `racer ${i}`, completedAt: new Date() }, 'pending'),
          ),
        );
        const applied = outcomes.filter((o) => o.applied);
        assert.equal(applied.length, 1, `round ${round}: ${applied.length} of 10 racing replaces applied`);
        const stored = await h.catalog.get(file.fileKey);
        assert.deepEqual(stored, applied[0]?.file, 'the catalog holds the one replace that applied');
        for (const o of outcomes.filter((x) => !x.applied)) assert.deepEqual(o.file, stored, 'a loser answers the record as it found it: the winner\'s');
      }
    });

    it('replace and addRun racing on one file: every run is recorded, every replace applies, runIds survive the replaces', async function () {
      const file = await given({ ...READY });
      const runIds = Array.from({ length: 10 }, (_, i) => `race-run-${i}`);
      await Promise.all([
        ...runIds.map((runId) => h.catalog.addRun(file.fileKey, runId, file.expiresAt)),
        ...Array.from({ length: 5 }, (_, i) => h.catalog.replace({ ...file, fileName: `renamed-${i}.pdf` }, 'ready')),
      ]);
      const stored = await h.catalog.get(file.fileKey);
      assert.deepEqual([...(stored?.runIds ?? [])].sort(), [...runIds].sort());
      assert.match(stored?.fileName ?? '', /^renamed-\d\.pdf$/u);
    });

    it('addRun: on a ready file appends the run and answers the record after; expiresAt moves only later', async function () {
      const file = await given({ ...READY, runIds: ['run-0'] });
      const later = new Date(file.expiresAt.getTime() + 86_400_000);
      const first = await h.catalog.addRun(file.fileKey, 'run-1', later);
      assert.deepEqual(first, { ...file, runIds: ['run-0', 'run-1'], expiresAt: later });
      const earlier = new Date(file.expiresAt.getTime() - 1);
      const second = await h.catalog.addRun(file.fileKey, 'run-2', earlier);
      assert.deepEqual(second, { ...file, runIds: ['run-0', 'run-1', 'run-2'], expiresAt: later }, 'an earlier expiresAt leaves it as it was');
      const same = await h.catalog.addRun(file.fileKey, 'run-1', later);
      assert.deepEqual(same?.runIds, ['run-0', 'run-1', 'run-2', 'run-1'], 'appended as given, also a run id seen before');
      assert.deepEqual(await h.catalog.get(file.fileKey), same, 'the answer is what the catalog now holds');
    });

    it(`addRun: keeps the last ${MAX_FILE_RUN_IDS} run ids, dropping the oldest`, async function () {
      const held = Array.from({ length: MAX_FILE_RUN_IDS - 1 }, (_, i) => `old-${i}`);
      const file = await given({ ...READY, runIds: held });
      assert.equal((await h.catalog.addRun(file.fileKey, 'new-0', file.expiresAt))?.runIds.length, MAX_FILE_RUN_IDS);
      await h.catalog.addRun(file.fileKey, 'new-1', file.expiresAt);
      const after = await h.catalog.addRun(file.fileKey, 'new-2', file.expiresAt);
      assert.deepEqual(after?.runIds, [...held.slice(2), 'new-0', 'new-1', 'new-2']);
      assert.deepEqual((await h.catalog.get(file.fileKey))?.runIds, after?.runIds);
    });

    it('addRun: answers undefined and changes nothing for a file that is not ready, or missing', async function () {
      for (const status of ['pending', 'rejected', 'expired'] as const satisfies readonly FileStatus[]) {
        const file = await given({ status, ...(status === 'pending' ? {} : { reason: 'not ready', completedAt: new Date('2026-03-01T10:01:00Z') }) });
        assert.equal(await h.catalog.addRun(file.fileKey, 'run-x', new Date('2030-01-01T00:00:00Z')), undefined, status);
        assert.deepEqual(await h.catalog.get(file.fileKey), file, `${status}: unchanged`);
      }
      const missing = contractFileKey();
      assert.equal(await h.catalog.addRun(missing, 'run-x', new Date()), undefined);
      assert.equal(await h.catalog.get(missing), undefined, 'nor created');
    });

    it('list: answers the files of the account newest first, files of the same millisecond by key, as get answers them', async function () {
      const accountId = contractAccountId();
      const sameMs = new Date('2026-03-03T04:05:06.789Z');
      const base = contractFileKey();
      // Created out of order: the order comes from createdAt (then the key), not from when they were created.
      const files = [
        await given({ accountId, fileKey: `${base}b`, createdAt: sameMs }),
        await given({ accountId, createdAt: new Date('2026-03-01T00:00:00Z'), ...READY, runIds: ['run-1'] }),
        await given({ accountId, createdAt: new Date('2026-03-05T00:00:00Z'), status: 'rejected', reason: 'The bytes are not a PDF.' }),
        await given({ accountId, fileKey: `${base}a`, createdAt: sameMs, status: 'expired' }),
        await given({ accountId, createdAt: new Date('2026-03-04T00:00:00Z') }),
      ];
      const page = await h.catalog.list(accountId, {}, { limit: 100 });
      assert.equal(page.next, undefined, 'one page holds all five');
      assert.deepEqual(keysOf(page.items), keysOf([files[2], files[4], files[3], files[0], files[1]]));
      for (const listed of page.items) assert.deepEqual(listed, await h.catalog.get(listed.fileKey), `${listed.fileKey} is listed as get answers it`);
      assert.deepEqual(await h.catalog.list(contractAccountId(), {}, { limit: 100 }), { items: [] }, 'an account without files: an empty page, no next');
    });

    it('list: pages to the last page without a gap or a repeat, whatever the limit; next is the last file\'s fileListKey', async function () {
      const accountId = contractAccountId();
      const expected = keysOf(newestFirst(await givenList(accountId, Array.from({ length: 7 }, () => ({})))));
      for (const limit of [1, 2, 3, 6, 7, 8, 100]) {
        const { files, pages } = await listAll(accountId, {}, limit);
        assert.deepEqual(keysOf(files), expected, `limit ${limit}`);
        assert.ok(pages >= Math.ceil(7 / limit), `limit ${limit}: ${pages} pages`);
      }
      const first = await h.catalog.list(accountId, {}, { limit: 3 });
      assert.deepEqual(keysOf(first.items), expected.slice(0, 3), 'a full first page while more follow');
      assert.equal(first.next, fileListKey(first.items[2] as StoredFile), "next is the last file's list key");
    });

    it('list: filters by status, as it is when the page is read', async function () {
      const accountId = contractAccountId();
      const statuses: readonly FileStatus[] = ['pending', 'ready', 'rejected', 'pending', 'expired', 'ready', 'pending'];
      const files = await givenList(accountId, statuses.map((status) => ({ status })));
      for (const status of ['pending', 'ready', 'rejected', 'expired'] as const) {
        assert.deepEqual(keysOf((await listAll(accountId, { status }, 2)).files), keysOf(newestFirst(files.filter((f) => f.status === status))), status);
      }
      // The newest pending file becomes ready between two pages: answered with its new status.
      const pending = newestFirst(files.filter((f) => f.status === 'pending')) as [StoredFile, StoredFile, StoredFile];
      const first = await h.catalog.list(accountId, { status: 'pending' }, { limit: 1 });
      assert.deepEqual(keysOf(first.items), keysOf([pending[0]]));
      await h.catalog.replace({ ...pending[1], ...READY }, 'pending');
      assert.deepEqual(keysOf((await listAll(accountId, { status: 'pending' }, 1, first.next)).files), keysOf([pending[2]]), 'no longer pending: not answered');
      const ready = (await listAll(accountId, { status: 'ready' }, 10)).files;
      assert.equal(ready.find((f) => f.fileKey === pending[1].fileKey)?.status, 'ready', 'now among the ready files');
    });

    it("list: never answers another account's file, whatever the filter or position", async function () {
      const a = contractAccountId();
      const b = contractAccountId();
      // Interleaved in time, same statuses: only the account tells them apart.
      const files = await givenList(a, Array.from({ length: 6 }, (_, i) => ({ accountId: i % 2 === 0 ? a : b })));
      const ofA = keysOf(newestFirst(files.filter((f) => f.accountId === a)));
      const ofB = keysOf(newestFirst(files.filter((f) => f.accountId === b)));
      for (const filter of [{}, { status: 'pending' as const }]) {
        assert.deepEqual(keysOf((await listAll(a, filter, 2)).files), ofA, `A, ${JSON.stringify(filter)}`);
        assert.deepEqual(keysOf((await listAll(b, filter, 1)).files), ofB, `B, ${JSON.stringify(filter)}`);
      }
      // A position taken from A's list, used on B's: B's files after it, never A's.
      const firstOfA = await h.catalog.list(a, {}, { limit: 1 });
      const fromThere = await h.catalog.list(b, {}, { limit: 100, after: firstOfA.next ?? '' });
      assert.ok(fromThere.items.length > 0 && fromThere.items.every((f) => f.accountId === b));
    });

    it('list: any string is a position (a forged cursor may carry one): the files after it as bytes', async function () {
      const accountId = contractAccountId();
      const [older, newer] = (await givenList(accountId, [{}, {}])) as [StoredFile, StoredFile];
      const between = fileListKey({ createdAt: new Date(older.createdAt.getTime() + 500), fileKey: 'file_between' });
      assert.deepEqual(keysOf((await h.catalog.list(accountId, {}, { limit: 10, after: between })).items), keysOf([older]));
      assert.deepEqual(keysOf((await h.catalog.list(accountId, {}, { limit: 10, after: '' })).items), keysOf([newer, older]), 'the empty position is before the first file');
      for (const past of ['~', 'not a position', '\u00e9t\u00e9 \u{1F600}', '9999999999999|']) {
        assert.deepEqual(await h.catalog.list(accountId, {}, { limit: 10, after: past }), { items: [] }, JSON.stringify(past));
      }
      // A key of the same millisecond sorts by bytes: 'file_' < 'file_~'.
      assert.deepEqual(keysOf((await h.catalog.list(accountId, {}, { limit: 10, after: fileListKey({ createdAt: newer.createdAt, fileKey: 'file_' }) })).items), keysOf([newer, older]));
      assert.deepEqual(keysOf((await h.catalog.list(accountId, {}, { limit: 10, after: fileListKey({ createdAt: newer.createdAt, fileKey: 'file_~' }) })).items), keysOf([older]));
    });

    it('list: a replaced file stays one entry, at the place its record\'s createdAt gives it', async function () {
      const accountId = contractAccountId();
      const [older, moved] = (await givenList(accountId, [{}, {}])) as [StoredFile, StoredFile];
      await h.catalog.replace({ ...moved, ...READY }, 'pending');
      await h.catalog.addRun(moved.fileKey, 'run-1', new Date('2030-01-01T00:00:00Z'));
      const movedBack: StoredFile = { ...moved, ...READY, createdAt: new Date(older.createdAt.getTime() - 1000) };
      assert.equal((await h.catalog.replace(movedBack, 'ready')).applied, true);
      assert.deepEqual(keysOf((await listAll(accountId, {}, 1)).files), keysOf([older, moved]));
      assert.deepEqual(keysOf((await listAll(accountId, { status: 'ready' }, 1)).files), keysOf([moved]));
      assert.deepEqual(keysOf((await listAll(accountId, { status: 'pending' }, 1)).files), keysOf([older]));
    });

    it('remove: the file is gone from get, list and due; removing it again, or a missing key, does nothing', async function () {
      const accountId = contractAccountId();
      const [kept, removed] = (await givenList(accountId, [{ expiresAt: new Date('2026-03-01T00:00:00Z') }, { expiresAt: new Date('2026-03-01T00:00:00Z') }])) as [StoredFile, StoredFile];
      await h.catalog.remove(removed.fileKey);
      assert.equal(await h.catalog.get(removed.fileKey), undefined);
      assert.deepEqual(keysOf((await h.catalog.list(accountId, {}, { limit: 10 })).items), keysOf([kept]));
      assert.deepEqual(keysOf((await h.catalog.list(accountId, { status: 'pending' }, { limit: 10 })).items), keysOf([kept]));
      assert.deepEqual(keysOf(await h.catalog.due(new Date('2026-04-01T00:00:00Z'), 10)), keysOf([kept]));
      await h.catalog.remove(removed.fileKey);
      await h.catalog.remove(contractFileKey());
      assert.deepEqual(await h.catalog.get(kept.fileKey), kept);
      // The key is free again.
      await h.catalog.create(removed);
      assert.deepEqual(await h.catalog.get(removed.fileKey), removed);
    });

    it('due: the pending and ready files whose expiresAt is not after now, soonest first; never rejected or expired ones', async function () {
      const now = new Date('2026-03-10T12:00:00.000Z');
      const at = (ms: number): Date => new Date(now.getTime() + ms);
      const readyDue = await given({ ...READY, expiresAt: at(-5000) });
      const pendingAtNow = await given({ expiresAt: now });
      const pendingDue = await given({ expiresAt: at(-86_400_000) });
      // Not due: a millisecond after now, later, or neither pending nor ready.
      await given({ expiresAt: at(1) });
      await given({ ...READY, expiresAt: at(60_000) });
      await given({ status: 'rejected', reason: 'refused', completedAt: at(-60_000), expiresAt: at(-10_000) });
      await given({ status: 'expired', reason: 'expired', expiresAt: at(-20_000) });
      const due = await h.catalog.due(now, 100);
      assert.deepEqual(keysOf(due), keysOf([pendingDue, readyDue, pendingAtNow]));
      assert.deepEqual(due[1], readyDue, 'answered as get answers it');
      assert.deepEqual(await h.catalog.due(at(-86_400_001), 100), [], 'nothing due before the first expiresAt');
    });

    it('due: at most limit files, the soonest', async function () {
      const now = new Date('2026-03-10T12:00:00.000Z');
      const files = [];
      for (let i = 0; i < 6; i += 1) files.push(await given({ ...(i % 2 === 0 ? READY : {}), expiresAt: new Date(now.getTime() - (i + 1) * 1000) }));
      const soonest = [...files].sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime());
      assert.deepEqual(keysOf(await h.catalog.due(now, 4)), keysOf(soonest.slice(0, 4)));
      assert.deepEqual(keysOf(await h.catalog.due(now, 1)), keysOf(soonest.slice(0, 1)));
      assert.deepEqual(keysOf(await h.catalog.due(now, 6)), keysOf(soonest));
    });

    it('due: follows replace and addRun: a file made rejected or expired leaves, one whose expiresAt moves later leaves, one moved earlier comes', async function () {
      const now = new Date('2026-03-10T12:00:00.000Z');
      const past = new Date(now.getTime() - 1000);
      const future = new Date(now.getTime() + 86_400_000);
      const rejected = await given({ expiresAt: past });
      const expired = await given({ ...READY, expiresAt: past });
      const used = await given({ ...READY, expiresAt: past });
      const extended = await given({ expiresAt: past });
      const shortened = await given({ ...READY, expiresAt: future });
      assert.equal((await h.catalog.replace({ ...rejected, status: 'rejected', reason: 'refused', completedAt: now }, 'pending')).applied, true);
      assert.equal((await h.catalog.replace({ ...expired, status: 'expired', reason: 'expired' }, 'ready')).applied, true);
      assert.equal((await h.catalog.addRun(used.fileKey, 'run-1', future))?.expiresAt.getTime(), future.getTime());
      assert.equal((await h.catalog.replace({ ...extended, ...READY, expiresAt: future }, 'pending')).applied, true);
      assert.equal((await h.catalog.replace({ ...shortened, expiresAt: past }, 'ready')).applied, true);
      assert.deepEqual(keysOf(await h.catalog.due(now, 100)), keysOf([shortened]));
      assert.deepEqual(keysOf(await h.catalog.due(future, 100)).sort(), keysOf([used, extended, shortened]).sort());
    });
  });
}
