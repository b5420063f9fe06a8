import { expect } from 'chai';
import { brotliCompressSync, constants, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { ExactNumber } from '@svc/core';
import { expectProblem, expectRateLimitHeaders } from '../../../tools/test-support/http.js';
import { apiKey, call, recordsPath, runPath, SECRETS, startApps, type RunningApps } from './support/harness.js';

// docs/CONTRACT.md "Request bodies and headers", "Row writes" and "Exact values": bodies are
// decoded, held to 1 MiB after decoding and parsed keeping every member and digit.
describe('adapter-http: request bodies read exactly', function () {
  let apps: RunningApps;
  const key = apiKey(SECRETS.keyA);
  const json = { ...key, 'content-type': 'application/json' };
  const insert = (raw: string | Uint8Array, headers: Record<string, string> = {}): ReturnType<typeof call> =>
    call(apps.url, 'POST', recordsPath(), { headers: { ...json, ...headers }, raw });
  const row = JSON.stringify({ entity: 'dbo.orders', values: { id: 9, sku: 'Z-9' } });

  beforeEach(async function () {
    apps = await startApps({ bodyLimitBytes: 64 * 1024 });
  });
  afterEach(async function () {
    await apps.close();
  });

  describe('Content-Encoding', function () {
    const codings: [string, (b: Buffer) => Buffer][] = [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
      ['GZip', gzipSync],
      ['identity', (b) => b],
    ];
    for (const [coding, encode] of codings) {
      it(`decodes a body sent with Content-Encoding: ${coding}`, async function () {
        const answer = await insert(encode(Buffer.from(row)), { 'content-encoding': coding });
        expect(answer.status, answer.text).to.equal(201);
        expect(apps.world.writer.rowsOf('dbo.orders')?.some((r) => r['sku'] === 'Z-9')).to.equal(true);
      });
    }

    it('answers 415 naming any other coding, with Accept-Encoding, and charges the request', async function () {
      for (const coding of ['compress', 'zstd', 'gzip, br', 'x-custom']) {
        const answer = await insert(row, { 'content-encoding': coding });
        const problem = expectProblem(answer, 415, 'unsupported_media_type');
        expect(problem.detail).to.include(coding);
        expect(answer.headers.get('accept-encoding')).to.equal('gzip, deflate, br');
        expectRateLimitHeaders(answer, true);
      }
    });

    it('answers 413 to a zip bomb: the limit holds for the decoded size, without inflating it all', async function () {
      // 64 MiB of zeros: 64 KiB gzipped, 1 KiB as brotli; the limit here is 64 KiB.
      const zeros = Buffer.alloc(64 * 1024 * 1024);
      for (const [coding, bomb] of [
        ['gzip', gzipSync(zeros, { level: 9 })],
        ['br', brotliCompressSync(zeros, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } })],
      ] as const) {
        const started = process.hrtime.bigint();
        const answer = await insert(bomb, { 'content-encoding': coding });
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        expectProblem(answer, 413, 'payload_too_large');
        expectRateLimitHeaders(answer, true);
        console.log(`      ${coding} bomb: ${bomb.length} coded bytes of 64 MiB → 413 in ${ms.toFixed(1)} ms`);
      }
    });

    it('answers 413 to a coded body whose decoded size is just over the limit, 201 just under', async function () {
      const body = (size: number): Buffer => {
        const base = `{"entity":"dbo.orders","values":{"sku":"`;
        return Buffer.from(`${base}${'x'.repeat(size - base.length - 3)}"}}`);
      };
      expect(body(64 * 1024)).to.have.length(64 * 1024);
      expectProblem(await insert(gzipSync(body(64 * 1024 + 1)), { 'content-encoding': 'gzip' }), 413, 'payload_too_large');
      expect((await insert(gzipSync(body(64 * 1024)), { 'content-encoding': 'gzip' })).status).to.equal(201);
    });

    it('answers 400 invalid_json with a clear detail to a corrupt or truncated coded body, never 500', async function () {
      const gz = gzipSync(Buffer.from(row));
      for (const [coding, bad] of [
        ['gzip', gz.subarray(0, gz.length - 6)],
        ['gzip', Buffer.from('not gzip at all')],
        ['deflate', deflateRawSync(Buffer.from(row))],
        ['br', Buffer.from([0xff, 0xff, 0xff, 0xff])],
      ] as const) {
        const problem = expectProblem(await insert(bad, { 'content-encoding': coding }), 400, 'invalid_json');
        expect(problem.detail).to.equal(`The request body could not be decoded as ${coding}: it is corrupt or truncated.`);
      }
    });
  });

  describe('JSON', function () {
    it('answers 400 invalid_json naming a member given twice, even with the same value', async function () {
      for (const raw of [
        '{"entity":"dbo.orders","values":{"qty":1,"qty":1}}',
        '{"entity":"dbo.orders","values":{"qty":1,"qty":2}}',
        '{"entity":"dbo.orders","entity":"dbo.orders","values":{"qty":1}}',
      ]) {
        const problem = expectProblem(await insert(raw), 400, 'invalid_json');
        expect(problem.detail).to.match(/^The member \/(values\/qty|entity) is given twice/u);
      }
      expect(apps.world.writer.received).to.have.length(0);
    });

    it('refuses a duplicate member in a run body too', async function () {
      const answer = await call(apps.url, 'POST', runPath(), { headers: json, raw: '{"message":"a","message":"b"}' });
      expect(expectProblem(answer, 400, 'invalid_json').detail).to.include('/message');
    });

    it('refuses unescaped control characters, comments, trailing commas and bad UTF-8', async function () {
      for (const raw of ['{"entity":"dbo.orders\u0001","values":{"a":1}}', '{"a":1,}', '{"a":1}//', '{"a":01}']) {
        expectProblem(await insert(raw), 400, 'invalid_json');
      }
      const problem = expectProblem(await insert(Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d])), 400, 'invalid_json');
      expect(problem.detail).to.equal('The request body is not valid UTF-8.');
    });

    it('answers 400, not 500, to a body nested a hundred thousand levels deep', async function () {
      expectProblem(await insert(`${'['.repeat(30_000)}${']'.repeat(30_000)}`), 400, 'invalid_json');
    });

    it('writes columns named __proto__, constructor and toString like any other, polluting no prototype', async function () {
      apps.world.writer.defineTable('dbo.odd', ['__proto__', 'constructor', 'toString']);
      const raw = '{"entity":"dbo.odd","values":{"__proto__":"p","constructor":"c","toString":"t"}}';
      const answer = await insert(raw);
      expect(answer.status, answer.text).to.equal(201);
      const values = apps.world.writer.received[0]?.values ?? {};
      expect(Object.keys(values)).to.deep.equal(['__proto__', 'constructor', 'toString']);
      expect(Object.getOwnPropertyDescriptor(values, '__proto__')?.value).to.equal('p');
      const polluting = '{"entity":"dbo.odd","values":{"__proto__":{"polluted":true}},"__proto__":{"polluted":true}}';
      expect((await insert(polluting)).status).to.equal(400);
      expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
      expect(Object.prototype).to.not.have.property('polluted');
    });

    it('hands numbers a JS number cannot hold to the core as ExactNumber, refusing those no column type holds', async function () {
      const answer = await insert('{"entity":"dbo.orders","values":{"id":9007199254740993,"qty":12345678901234567890.123456789,"sku":0.1}}');
      expect(answer.status, answer.text).to.equal(201);
      const values = apps.world.writer.received[0]?.values ?? {};
      expect(values['id']).to.be.instanceOf(ExactNumber).and.have.property('text', '9007199254740993');
      expect(values['qty']).to.be.instanceOf(ExactNumber).and.have.property('text', '12345678901234567890.123456789');
      expect(values['sku']).to.equal(0.1);
      const refused = await insert('{"entity":"dbo.orders","values":{"id":1e400,"qty":1}}');
      const problem = expectProblem(refused, 400, 'invalid_value');
      expect(problem.errors?.map((e) => e.path)).to.deep.equal(['/values/id']);
      const key = await call(apps.url, 'PATCH', recordsPath(), {
        headers: json,
        raw: '{"entity":"dbo.orders","key_column":"id","key_value":0.0000000000000000000000000000000000000001,"values":{"sku":"x"}}',
      });
      expect(expectProblem(key, 400, 'invalid_value').errors?.map((e) => e.path)).to.deep.equal(['/key_value']);
    });
  });

  describe('column rules', function () {
    it('answers 400 validation_failed naming /values over 2,098 columns, and the second of two names equal case-insensitively', async function () {
      const many = Object.fromEntries(Array.from({ length: 2_101 }, (_, i) => [`c${i}`, 1]));
      const problem = expectProblem(await call(apps.url, 'POST', recordsPath(), { headers: key, json: { entity: 'dbo.orders', values: many } }), 400, 'validation_failed');
      expect(problem.errors?.map((e) => e.path)).to.deep.equal(['/values']);
      const twice = expectProblem(await insert('{"entity":"dbo.orders","values":{"sku":"a","SKU":"b"}}'), 400, 'validation_failed');
      expect(twice.errors?.map((e) => e.path)).to.deep.equal(['/values/SKU']);
    });
  });
});
