/**
 * Same-work peer of the row insert: Koa, `POST /api/v1/connections/:connection_id/records`
 * matched by a regular expression, the credential looked up by digest, one
 * rate-limiter-flexible `RateLimiterMemory` window (credential), the body read with
 * raw-body (1 MiB) and validated by ajv against the core's `InsertRecordRequest`, then
 * one parameterised `INSERT` (the batch the project's writer sends: `SET NOCOUNT ON`,
 * `INSERT`, `SELECT @@ROWCOUNT`) through tedious on a tarn pool of at most 10
 * connections (the project's default `pool_max`), `201 {data: {rows_affected}}`.
 * `node koa-insert.js CONFIG_JSON`; stops on SIGTERM (closes the pool).
 */
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { Pool } from 'tarn';
import { Connection, Request, TYPES } from 'tedious';
import { bodyValidators, listen, peerApp, problem, readPeerConfig, serialised, setRateLimitHeaders } from './shared.js';

const config = readPeerConfig();
const db = config.sqlserver;
if (db === undefined) throw new Error('the insert peer needs sqlserver in its configuration');
const { credential } = config.limits;
const credentialLimiter = new RateLimiterMemory({ points: credential.requests, duration: credential.window_seconds, keyPrefix: 'rl:credential' });
const charge = serialised();
const connections = new Map(config.connections.map((c) => [c.id, c.accountId]));
const { insert: validate } = bodyValidators();

const pool = new Pool<Connection>({
  min: 0,
  max: 10,
  create: () =>
    new Promise<Connection>((resolve, reject) => {
      const connection = new Connection({
        server: db.host,
        authentication: { type: 'default', options: { userName: db.user, password: db.password } },
        options: { port: db.port, database: db.database, encrypt: false, trustServerCertificate: true, connectTimeout: 5_000, requestTimeout: 5_000 },
      });
      connection.on('error', () => undefined);
      connection.connect((error) => (error ? reject(error) : resolve(connection)));
    }),
  destroy: (connection) =>
    new Promise<void>((resolve) => {
      if (connection.closed) return resolve();
      connection.once('end', () => resolve());
      connection.close();
    }),
  validate: (connection) => !connection.closed,
});

/** `[name]` with `]` doubled (T-SQL quoted identifier). */
const quote = (name: string) => `[${name.replace(/\]/gu, ']]')}]`;

function typeOf(value: unknown) {
  if (typeof value === 'boolean') return TYPES.Bit;
  if (typeof value === 'number') return Number.isInteger(value) ? (Math.abs(value) <= 2_147_483_647 ? TYPES.Int : TYPES.BigInt) : TYPES.Float;
  return TYPES.NVarChar;
}

async function insert(entity: string, values: Record<string, unknown>): Promise<number> {
  const [schema, table] = entity.split('.') as [string, string];
  const columns = Object.keys(values);
  const sql = [
    'SET NOCOUNT ON;',
    `INSERT INTO ${quote(schema)}.${quote(table)} (${columns.map(quote).join(', ')}) VALUES (${columns.map((_, i) => `@p${i}`).join(', ')});`,
    'SELECT @@ROWCOUNT AS [rows_affected];',
  ].join('\n');
  const connection = await pool.acquire().promise;
  try {
    return await new Promise<number>((resolve, reject) => {
      let rows = 0;
      const request = new Request(sql, (error) => (error ? reject(error) : resolve(rows)));
      columns.forEach((column, i) => {
        const value = values[column];
        request.addParameter(`p${i}`, typeOf(value), value, typeof value === 'string' ? { length: 4000 } : {});
      });
      request.on('row', (row: { value: unknown }[]) => (rows = Number(row[0]?.value ?? 0)));
      connection.execSql(request);
    });
  } finally {
    pool.release(connection);
  }
}

const RECORDS_PATH = /^\/api\/v1\/connections\/([^/]+)\/records$/u;
const app = peerApp(config, RECORDS_PATH, async (ctx, match, caller, body) => {
  const decision = await charge([{ limiter: credentialLimiter, key: caller.keyId, limit: credential.requests }]);
  setRateLimitHeaders(ctx.res, decision);
  if (!decision.allowed) return problem(ctx, 429, 'rate_limited', 'Too many requests.');
  if (!validate(body)) return problem(ctx, 400, 'validation_failed', 'The body does not match the schema.');
  if (connections.get(decodeURIComponent(match[1] ?? '')) !== caller.accountId) return problem(ctx, 404, 'not_found', 'The connection was not found.');
  const { entity, values } = body as { entity: string; values: Record<string, unknown> };
  let rowsAffected: number;
  try {
    rowsAffected = await insert(entity, values);
  } catch {
    return problem(ctx, 502, 'database_error', 'The insert failed.');
  }
  ctx.status = 201;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify({ data: { rows_affected: rowsAffected } });
});
listen(app.callback(), config.port, async () => {
  await pool.destroy();
});
