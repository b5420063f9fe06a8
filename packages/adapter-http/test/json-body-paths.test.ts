import { expect } from 'chai';
import { ExactNumber, type InsertCommand } from '@svc/core';
import { apiKey, call, recordsPath, SECRETS, startApps, type RunningApps } from './support/harness.js';

// json-body.ts reads a compact body (the text JSON.stringify writes) on a fast path and
// any other text on the exact path. Both must build the same value from the same data:
// the same numbers (JS number or ExactNumber), the same members, objects without a
// prototype; and a repeated member is refused on both.
describe('adapter-http: compact and pretty-printed bodies are read alike', function () {
  let apps: RunningApps;
  before(async function () {
    apps = await startApps();
  });
  after(async function () {
    await apps.close();
  });

  const texts = [
    '{"entity":"dbo.orders","values":{"id":7,"sku":"A-1","qty":0.1,"note":null,"status":"new"}}',
    '{"entity":"dbo.orders","values":{"id":8,"sku":"1e+300","qty":1e+300,"note":"\\u0000x","status":"new"}}',
    '{"entity":"dbo.orders","values":{"id":9,"sku":"big","qty":9007199254740993,"note":"é","status":"new"}}',
    '{"entity":"dbo.orders","values":{"id":10,"sku":"p","qty":-1.5e-7,"note":"\\ud83d\\ude00","status":"new"}}',
  ];

  function pretty(text: string): string {
    // Reformats without JSON.parse (which would round the numbers): whitespace after the
    // structural characters outside strings is enough to leave the fast path.
    let out = '';
    let inString = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i] as string;
      out += c;
      if (c === '"' && text[i - 1] !== '\\') inString = !inString;
      if (!inString && (c === ':' || c === ',' || c === '{')) out += '\n  ';
    }
    return out;
  }

  /** The answer (without its request id) and the command the writer received, if any. */
  async function outcome(text: string): Promise<{ status: number; body: unknown; command: InsertCommand | undefined }> {
    const before = apps.world.writer.received.length;
    const answer = await call(apps.url, 'POST', recordsPath(), { headers: { ...apiKey(SECRETS.keyA), 'content-type': 'application/json' }, raw: text });
    const { request_id: _id, ...body } = JSON.parse(answer.text) as Record<string, unknown>;
    return { status: answer.status, body, command: apps.world.writer.received[before] as InsertCommand | undefined };
  }

  const view = (values: Readonly<Record<string, unknown>>): Record<string, unknown> =>
    Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v instanceof ExactNumber ? `exact:${v.toString()}` : v]));

  for (const text of texts) {
    it(`reads ${text.slice(38, 78)}… the same either way`, async function () {
      const compact = await outcome(text);
      const spaced = await outcome(pretty(text));
      expect(compact.status).to.equal(spaced.status);
      if (compact.status !== 201) {
        // Refused alike (1e+300 is no column type's value): same problem details.
        expect(compact.body).to.deep.equal(spaced.body);
        expect(compact.command).to.equal(undefined);
        return;
      }
      expect(view(compact.command?.values ?? {})).to.deep.equal(view(spaced.command?.values ?? {}));
    });
  }

  it('keeps numbers a JS number cannot hold as ExactNumber on the compact path too', async function () {
    const command = (await outcome(texts[2] as string)).command as InsertCommand;
    expect(command.values['qty']).to.be.instanceOf(ExactNumber);
    expect(String(command.values['qty'])).to.equal('9007199254740993');
  });

  it('keeps a member named __proto__ a member on both paths, changing no prototype', async function () {
    const text = '{"entity":"dbo.orders","values":{"id":11,"__proto__":"x","constructor":"y"}}';
    for (const raw of [text, pretty(text)]) {
      const { command } = await outcome(raw);
      const values = command?.values as Record<string, unknown>;
      expect(Object.keys(values)).to.deep.equal(['id', '__proto__', 'constructor']);
      expect(Object.getOwnPropertyDescriptor(values, '__proto__')?.value).to.equal('x');
      expect(Object.getPrototypeOf(values)).to.equal(null);
    }
    expect(({} as Record<string, unknown>)['x']).to.equal(undefined);
  });

  it('refuses a member given twice with the same value, compact or not', async function () {
    for (const text of ['{"entity":"dbo.orders","values":{"id":1,"id":1}}', '{"entity":"dbo.orders","entity":"dbo.orders","values":{"id":1}}']) {
      const answer = await call(apps.url, 'POST', recordsPath(), { headers: { ...apiKey(SECRETS.keyA), 'content-type': 'application/json' }, raw: text });
      expect(answer.status).to.equal(400);
      expect(JSON.parse(answer.text)).to.include({ code: 'invalid_json' });
    }
  });

  // A body without escapes or __proto__, whose numbers are short integers, takes a path of its own (parsePlain): it
  // must read exactly as the same data sent with one escape, which the other paths read.
  describe('bodies without escapes, numbers only short integers (the plain path)', function () {
    /** The same JSON text with the member name `entity` escaped: it leaves the plain path. */
    const escaped = (text: string): string => text.replace('"entity"', '"\\u0065ntity"');

    const plainTexts = [
      '{"entity":"dbo.orders","values":{"sku":"A-1","note":"x: y, {z} [1]","status":"new"}}',
      '{ "entity" : "dbo.orders",\n  "values": { "sku": "B-2", "note": null, "status": "new" } }',
      '{"entity":"dbo.orders","values":{"sku":"A","sku":"A"}}',
      '{"entity":"dbo.orders","values":{"sku":"A","note":"a","note":"b"}}',
      '{"entity":"dbo.orders","entity":"dbo.orders","values":{"sku":"C"}}',
      '{"entity":"dbo.orders","values":{"note":[{"a":"b","a":"b"}]}}',
      `{"entity":"dbo.orders","values":{"note":${'['.repeat(70)}${']'.repeat(70)}}}`,
      `{"entity":"dbo.orders","values":{"note":${'['.repeat(60)}${']'.repeat(60)}}}`,
      '{"entity":"dbo.orders","values":{"note":"a\u0001b"}}',
      '{"entity":"dbo.orders","values":{"sku":"D","status":true,"note":[]}}',
      '{"entity":"dbo.orders","values":{"sku":"E",}}',
      '{"entity":"dbo.orders","values":{"sku":"F" "note":"x"}}',
      // Short integers stay on the plain path; any other number leaves it.
      '{"entity":"dbo.orders","values":{"id":7,"qty":-3,"sku":"H","note":0}}',
      '{"entity":"dbo.orders","values":{"id":123456789012345,"qty":-123456789012345,"note":-0}}',
      '{"entity":"dbo.orders","values":{"id":1234567890123456,"qty":9007199254740993}}',
      '{"entity":"dbo.orders","values":{"id":1,"qty":1.5,"note":1e3,"sku":"2E2"}}',
      '{"entity":"dbo.orders","values":{"id":01}}',
      '{"entity":"dbo.orders","values":{"id":-}}',
      '{"entity":"dbo.orders","values":{"id":1,"id":1}}',
      '{"entity":"dbo.orders","values":{"id":[1,-2,30],"qty":0.0}}',
    ];

    for (const text of plainTexts) {
      it(`reads ${JSON.stringify(text.slice(0, 70))}… as it reads the same data with an escape`, async function () {
        const plain = await outcome(text);
        const other = await outcome(escaped(text));
        expect(plain.status).to.equal(other.status);
        // The escape moves what follows it by five columns on its line; nothing else may differ.
        const columnless = (body: unknown): string => JSON.stringify(body).replace(/column \d+/gu, 'column N');
        expect(columnless(plain.body)).to.equal(columnless(other.body));
        expect(view(plain.command?.values ?? {})).to.deep.equal(view(other.command?.values ?? {}));
      });
    }

    it('refuses a member given twice with the same value, even where every other check passes', async function () {
      const answer = await outcome('{"entity":"dbo.orders","values":{"sku":"A","sku":"A"}}');
      expect(answer.status).to.equal(400);
      expect(answer.body).to.include({ code: 'invalid_json' });
      expect(answer.command).to.equal(undefined);
    });

    it('writes a member whose string holds colons, digits and minus signs as it was sent', async function () {
      const answer = await outcome('{"entity":"dbo.orders","values":{"sku":"G-7","note":"a:1, -2: {}[]","status":"new"}}');
      expect(answer.status).to.equal(201);
      expect(answer.command?.values).to.deep.include({ sku: 'G-7', note: 'a:1, -2: {}[]', status: 'new' });
    });
  });
});

