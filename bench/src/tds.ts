import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Connection, Request, TYPES } from 'tedious';
import { INSERT_TABLE, TDS_LOGIN } from './fixtures.js';
import { benchChild, REPO_ROOT } from './paths.js';

/** The scripted TDS server in its child process, or why there is none. */
export type TdsServer = { readonly port: number; stop(): Promise<void> } | { readonly skip: string };

/**
 * Starts `children/tds-server` and reads its one-line answer (port or skip reason),
 * within `deadlineMs`.
 */
export function startTdsServer(deadlineMs = 15_000): Promise<TdsServer> {
  const command = benchChild('tds-server');
  const child = spawn(process.execPath, [...command.execArgv, command.script], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-2000)));
  process.once('exit', () => child.kill('SIGKILL'));
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve({ skip: `the scripted TDS server did not start within ${deadlineMs} ms` });
    }, deadlineMs);
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      clearTimeout(timer);
      let answer: { port?: number; skip?: string };
      try {
        answer = JSON.parse(line) as typeof answer;
      } catch {
        answer = { skip: `unexpected output of the TDS child: ${line.slice(0, 200)}` };
      }
      if (answer.port === undefined) {
        child.kill('SIGKILL');
        resolve({ skip: answer.skip ?? 'the TDS child gave no port' });
        return;
      }
      const exit = new Promise<void>((r) => child.once('exit', () => r()));
      resolve({
        port: answer.port,
        stop: async () => {
          child.kill('SIGTERM');
          const kill = setTimeout(() => child.kill('SIGKILL'), 3000);
          await exit;
          clearTimeout(kill);
        },
      });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ skip: `the TDS child exited (${String(code)}) before listening: ${stderr.trim().split('\n').slice(-3).join(' | ')}` });
    });
  });
}

/**
 * The same batch the SQL Server writer sends for the bench's insert body (see
 * `insertStatement` in `@svc/adapter-sqlserver`): one `sp_executesql` RPC.
 */
export const RAW_INSERT_SQL = [
  'SET NOCOUNT ON;',
  `INSERT INTO [${INSERT_TABLE.schema}].[${INSERT_TABLE.table}] ([sku], [qty], [note]) VALUES (@p0, @p1, @p2);`,
  'SELECT @@ROWCOUNT AS [rows_affected];',
].join('\n');

/** Raw tedious on one open connection: the floor the API's insert is compared with. */
export interface RawTediousClient {
  /** Runs the insert once; resolves with the reported row count. */
  insert(): Promise<number>;
  close(): Promise<void>;
}

/** Opens one tedious connection to the scripted TDS server (no TLS). */
export function connectRawTedious(port: number, timeoutMs = 5000): Promise<RawTediousClient> {
  const connection = new Connection({
    server: '127.0.0.1',
    authentication: { type: 'default', options: { userName: TDS_LOGIN.user, password: TDS_LOGIN.password } },
    options: { port, database: TDS_LOGIN.database, encrypt: false, trustServerCertificate: true, connectTimeout: timeoutMs, requestTimeout: timeoutMs },
  });
  return new Promise((resolve, reject) => {
    connection.once('connect', (error) => {
      if (error) {
        reject(error);
        return;
      }
      resolve({
        insert: () =>
          new Promise<number>((done, fail) => {
            let rows = 0;
            const request = new Request(RAW_INSERT_SQL, (e) => (e ? fail(e) : done(rows)));
            request.addParameter('p0', TYPES.NVarChar, 'A-1', { length: 4000 });
            request.addParameter('p1', TYPES.Int, 3);
            request.addParameter('p2', TYPES.NVarChar, 'bench', { length: 4000 });
            request.on('row', (columns: { value: unknown }[]) => (rows = Number(columns[0]?.value ?? 0)));
            connection.execSql(request);
          }),
        close: () =>
          new Promise<void>((done) => {
            connection.once('end', () => done());
            connection.close();
          }),
      });
    });
    connection.on('error', () => undefined);
    connection.connect();
  });
}
