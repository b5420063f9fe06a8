import { expect } from 'chai';
import { apiKey, call, recordsPath, SECRETS, startApps, type Answer, type RunningApps } from './support/harness.js';
import { OpenApiChecker } from './support/openapi-check.js';

const EMOJI = '😀'; // outside the BMP: one code point, two UTF-16 code units
const t = (n: number): string => 't'.repeat(n);

/**
 * Boundary values of `entity` and of a column name, with the answer the rules of
 * docs/CONTRACT.md "Row writes" give (each part 1..128 UTF-16 code units, as SQL Server's
 * `sysname`; no control character; no dot inside a part; brackets are not quoting).
 */
const ENTITIES: readonly (readonly [string, string, boolean])[] = [
  ['schema.table', 'dbo.orders', true],
  ['bracketed parts are names, not quoting', '[dbo].[orders]', true],
  ['a dot inside brackets is still a dot', '[my.schema].orders', false],
  ['one part', 'orders', false],
  ['three parts', 'a.b.c', false],
  ['empty schema', '.orders', false],
  ['empty table', 'dbo.', false],
  ['two dots', 'dbo..orders', false],
  ['128 code units', `dbo.${t(128)}`, true],
  ['129 code units', `dbo.${t(129)}`, false],
  ['schema of 129', `${t(129)}.orders`, false],
  ['64 emoji = 128 units', `dbo.${EMOJI.repeat(64)}`, true],
  ['65 emoji = 130 units (65 code points)', `dbo.${EMOJI.repeat(65)}`, false],
  ['schema of 65 emoji', `${EMOJI.repeat(65)}.orders`, false],
  ['126 + 1 emoji = 128 units', `dbo.${t(126)}${EMOJI}`, true],
  ['127 + 1 emoji = 129 units (128 code points)', `dbo.${t(127)}${EMOJI}`, false],
  ['emoji first, 129 units', `dbo.${EMOJI}${t(127)}`, false],
  ['emoji in the middle, 128 units', `dbo.${t(60)}${EMOJI}${t(66)}`, true],
  ['a lone surrogate counts one unit', `dbo.${'\ud800'.repeat(128)}`, true],
  ['129 lone surrogates', `dbo.${'\ud800'.repeat(129)}`, false],
  ['space and ] allowed', 'dbo.my we]ird table', true],
  ['no-break space allowed', 'dbo.a\u00a0b', true],
  ['C0 control', 'dbo.a\u0007b', false],
  ['DEL', 'dbo.a\u007fb', false],
  ['C1 control', 'dbo.a\u0085b', false],
];

/** Is `pointer` one of the places a 400 `validation_failed` names? */
function refuses(answer: Answer, pointer: string): boolean {
  const body = answer.body as { code?: string; errors?: { path: string }[] } | undefined;
  return answer.status === 400 && body?.code === 'validation_failed' && (body.errors ?? []).some((e) => e.path === pointer);
}

describe('adapter-http: the document\'s entity and column name patterns accept exactly what the server accepts', function () {
  let apps: RunningApps;
  let checker: OpenApiChecker;
  before(async function () {
    apps = await startApps();
    checker = OpenApiChecker.fromYaml((await call(apps.url, 'GET', '/openapi.yaml')).text);
  });
  after(async function () {
    await apps?.close();
  });

  for (const [name, entity, valid] of ENTITIES) {
    it(`entity, ${name}: ${valid ? 'accepted' : 'refused'} by both`, async function () {
      const body = { entity, values: { id: 1 } };
      const answer = await call(apps.url, 'POST', recordsPath(), { headers: { ...apiKey(SECRETS.keyA), 'content-type': 'application/json' }, raw: JSON.stringify(body) });
      const server = !refuses(answer, '/entity');
      const documented = checker.validator({ $ref: '#/components/schemas/InsertRecordRequest' })(body);
      expect({ server, documented }, answer.text).to.deep.equal({ server: valid, documented: valid });
    });
  }

  for (const [name, entity, valid] of ENTITIES.filter(([, e]) => e.startsWith('dbo.') && !e.slice(4).includes('.'))) {
    it(`column name and key_column, ${name}: ${valid ? 'accepted' : 'refused'} by both`, async function () {
      const column = entity.slice('dbo.'.length);
      const body = { entity: 'dbo.orders', key_column: column, key_value: 1, values: { [column]: 1 } };
      const answer = await call(apps.url, 'PATCH', recordsPath(), { headers: { ...apiKey(SECRETS.keyA), 'content-type': 'application/json' }, raw: JSON.stringify(body) });
      const server = { key: !refuses(answer, '/key_column'), column: !answer.text.includes('column name') };
      const documented = checker.validator({ $ref: '#/components/schemas/UpdateRecordRequest' })(body);
      expect({ ...server, documented }, answer.text).to.deep.equal({ key: valid, column: valid, documented: valid });
    });
  }
});
