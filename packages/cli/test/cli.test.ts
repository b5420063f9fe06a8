import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../tools/test-support/ports.js';
import { API_KEY, ACCESS_TOKEN, CLI_AGENT, PG_CONNECTION, SQL_CONNECTION, startApiServer, type ApiServer } from '../../client/test/support/api-server.js';
import { CSV_BYTES, PDF_BYTES, PNG_BYTES, sha256Hex } from '../../client/test/support/files.js';

// `svc` as a user runs it: the built binary (packages/cli/dist/main.js) as a child process,
// against the API server started as a process, with a home and profile of its own.

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(REPO_ROOT, 'packages/cli/dist/main.js');
/** A command's deadline: a run takes ~0.5 s; a refused connection is retried for 3.5 s. */
const COMMAND_DEADLINE_MS = 30_000;
/** Control sequences (CSI) of a terminal: never in plain output. */
// eslint-disable-next-line no-control-regex
const CSI = /\u001b\[/u;

interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment of a user with nothing set but `extra` (no SVC_* of this process, its own HOME). */
function userEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('SVC_') || key.startsWith('npm_') || key.startsWith('pnpm_') || key === 'NODE_OPTIONS' || key === 'XDG_CONFIG_HOME') continue;
    env[key] = value;
  }
  return { ...env, HOME: home, ...extra };
}

/** Runs `node BIN ...args` to its end (killed at the deadline), with `input` on stdin. */
function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv, input = ''): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'], timeout: COMMAND_DEADLINE_MS, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe('svc, the command-line client (built binary, live API server)', function () {
  this.timeout(120_000);
  let api: ApiServer;
  let home: string;
  let env: NodeJS.ProcessEnv;
  /** `svc args` as the user of `env`. */
  const svc = (args: readonly string[], extra: NodeJS.ProcessEnv = {}, input = ''): Promise<Result> => run(process.execPath, [BIN, ...args], { ...env, ...extra }, input);

  before(async function () {
    // Brings packages/cli/dist up to date (a no-op after pnpm test's own tsc -b).
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const build = spawnSync(process.execPath, [tsc, '-b', 'packages/cli'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(build.status, `${build.stdout}${build.stderr}`).to.equal(0);
    api = await startApiServer(100);
    home = await mkdtemp(join(tmpdir(), 'svc-cli-'));
    env = userEnv(home);
  });
  after(async function () {
    await api?.stop();
    if (home !== undefined) await rm(home, { recursive: true, force: true });
  });

  it('has --help on every command, with the exit codes at the end', async function () {
    const top = await svc(['--help']);
    expect(top.code).to.equal(0);
    expect(top.stdout).to.match(/^Usage: svc /u);
    expect(top.stdout).to.contain('Exit codes:').and.contain('8    --wait: the run ended failed or cancelled');
    const paths = [['index'], ['openapi'], ['login'], ['logout'], ['runs'], ['runs', 'start'], ['runs', 'get'], ['runs', 'list'], ['records'], ['records', 'insert'], ['records', 'update'], ['files'], ['files', 'upload'], ['files', 'list'], ['files', 'get'], ['files', 'delete'], ['completion']];
    // Independent processes: all at once.
    const [version, ...helps] = await Promise.all([svc(['--version']), ...paths.map((path) => svc([...path, '--help']))]);
    for (const [i, path] of paths.entries()) {
      const help = helps[i]!;
      expect(help.code, path.join(' ')).to.equal(0);
      expect(help.stdout, path.join(' ')).to.match(new RegExp(`^Usage: svc ${path.join(' ')}`, 'u'));
      expect(help.stdout, path.join(' ')).to.contain('Exit codes:');
    }
    expect(version.stdout.trim()).to.match(/^\d+\.\d+\.\d+$/u);
  });

  it('reads the index and the OpenAPI document without a credential', async function () {
    const index = await svc(['index', '--base-url', api.base]);
    expect(index.code).to.equal(0);
    expect(index.stdout).to.match(/^version +v1$/mu).and.match(/^cli +svc \(from a clone of the repository: pnpm svc --help/mu);
    const json = await svc(['index', '-o', 'json'], { SVC_BASE_URL: api.base });
    expect((JSON.parse(json.stdout) as { base_url: string }).base_url).to.equal(api.base);
    const openapi = await svc(['openapi', '--base-url', api.base]);
    expect(openapi.stdout).to.match(/^openapi: 3\.1\.0\n/u);
  });

  it('logs in (profile 0600 in a 0700 directory), then starts a run and waits for it with the profile alone', async function () {
    const config = join(home, '.config', 'svc', 'config.json');
    const login = await svc(['login', '--base-url', api.base, '--api-key', API_KEY]);
    expect(login.code, login.stderr).to.equal(0);
    expect(login.stdout.trim()).to.equal(`profile written to ${config}`);
    expect((await stat(config)).mode & 0o777).to.equal(0o600);
    expect((await stat(join(home, '.config', 'svc'))).mode & 0o777).to.equal(0o700);
    expect(JSON.parse(await readFile(config, 'utf8'))).to.deep.equal({ base_url: api.base, api_key: API_KEY });

    const started = await svc(['runs', 'start', CLI_AGENT, '--message', 'Summarise the orders', '--wait']);
    expect(started.code, started.stderr).to.equal(0);
    expect(started.stdout).to.match(/^status +succeeded$/mu);
    // Not a terminal: plain progress lines, no control sequences, the last one final.
    expect(started.stderr).not.to.match(CSI);
    const lines = started.stderr.trim().split('\n');
    expect(lines.at(-1)).to.match(/^run [0-9a-f-]{36}: succeeded/u);

    const runId = /^run_id +(\S+)$/mu.exec(started.stdout)?.[1] ?? '';
    const got = await svc(['runs', 'get', runId, '-o', 'json']);
    expect((JSON.parse(got.stdout) as { status: string }).status).to.equal('succeeded');
    const list = await svc(['runs', 'list', '--agent', CLI_AGENT, '--limit', '1']);
    expect(list.stdout).to.match(/^run_id +agent_id +status +created_at$/mu).and.contain(runId);

    const logout = await svc(['logout']);
    expect(logout.stdout.trim()).to.equal(`profile ${config} removed`);
    const none = await svc(['runs', 'get', runId, '--base-url', api.base]);
    expect(none.code).to.equal(2);
    expect(none.stderr).to.contain('no credential');
  });

  it('takes flags over the environment over the profile, and refuses to store a credential the API refuses', async function () {
    const refused = await svc(['login', '--base-url', api.base, '--api-key', 'svc-not-a-key-of-anyone-at-all']);
    expect(refused.code).to.equal(3);
    expect(refused.stderr).to.contain('401 invalid_credential');
    expect((await svc(['logout'])).stdout).to.contain('no profile');

    // A key piped on stdin (not at a terminal), as `svc login < keyfile` would.
    expect((await svc(['login', '--base-url', api.base], {}, `${API_KEY}\n`)).code).to.equal(0);
    const viaProfile = await svc(['records', 'update', SQL_CONNECTION, 'dbo.orders', '--key', 'id=424242', 'qty=1']);
    expect(viaProfile.code, viaProfile.stderr).to.equal(0);
    const envWins = await svc(['records', 'update', SQL_CONNECTION, 'dbo.orders', '--key', 'id=424242', 'qty=1'], { SVC_API_KEY: 'svc-wrong-key-in-the-environment-0000' });
    expect(envWins.code).to.equal(3);
    const flagWins = await svc(['records', 'update', SQL_CONNECTION, 'dbo.orders', '--key', 'id=424242', 'qty=1', '--api-key', API_KEY], { SVC_API_KEY: 'svc-wrong-key-in-the-environment-0000' });
    expect(flagWins.code, flagWins.stderr).to.equal(0);
    const token = await svc(['runs', 'list', '--limit', '1', '--access-token', ACCESS_TOKEN]);
    expect(token.code, token.stderr).to.equal(0);
    await svc(['logout']);
  });

  it('inserts and updates a row (arguments, --json, --egress) and prints rows_affected', async function () {
    const creds = { SVC_BASE_URL: api.base, SVC_API_KEY: API_KEY };
    const insert = await svc(['records', 'insert', SQL_CONNECTION, 'dbo.orders', 'id=7', 'sku=B-7', 'qty=3', 'note=null'], creds);
    expect([insert.code, insert.stdout]).to.deep.equal([0, 'rows_affected  1\n']);
    const file = join(home, 'row.json');
    await writeFile(file, '{"id": 8, "sku": "C-1", "note": "007"}');
    const fromFile = await svc(['records', 'insert', SQL_CONNECTION, 'dbo.orders', '--json', file, '-o', 'json'], creds);
    expect(JSON.parse(fromFile.stdout)).to.deep.equal({ rows_affected: 1 });
    const fromStdin = await svc(['records', 'insert', SQL_CONNECTION, 'dbo.orders', '--json', '-', '--egress'], creds, '{"id": 9}');
    expect(fromStdin.stdout).to.equal('rows_affected  1\n');
    const update = await svc(['records', 'update', SQL_CONNECTION, 'dbo.orders', '--key', 'id=7', 'qty=4', 'note="007"', '--egress'], creds);
    expect([update.code, update.stdout]).to.deep.equal([0, 'rows_affected  1\n']);
  });

  it('prints problem details readably (or as JSON) on stderr, with an exit code by class', async function () {
    const creds = { SVC_BASE_URL: api.base, SVC_API_KEY: API_KEY };
    const invalid = await svc(['records', 'insert', SQL_CONNECTION, 'orders', 'qty=1'], creds);
    expect(invalid.code).to.equal(5);
    expect(invalid.stdout).to.equal('');
    expect(invalid.stderr).to.match(/^svc: 400 validation_failed: \/entity: /u);
    expect(invalid.stderr).to.match(/^ {2}\/entity: must be written schema\.table/mu).and.match(/^ {2}request id: [0-9a-f-]{36}$/mu);

    const json = await svc(['records', 'insert', SQL_CONNECTION, 'orders', 'qty=1', '-o', 'json'], creds);
    const problem = JSON.parse(json.stderr) as { status: number; code: string; errors: { path: string }[]; request_id: string };
    expect([json.code, problem.status, problem.code, problem.errors[0]?.path]).to.deep.equal([5, 400, 'validation_failed', '/entity']);

    const notWritable = await svc(['records', 'insert', PG_CONNECTION, 'public.orders', 'id=1'], creds);
    expect([notWritable.code, /writes_not_supported/u.test(notWritable.stderr)]).to.deep.equal([5, true]);
    const missing = await svc(['runs', 'get', '00000000-0000-4000-8000-000000000000'], creds);
    expect([missing.code, /^svc: 404 not_found: /u.test(missing.stderr)]).to.deep.equal([4, true]);
    const failed = await svc(['runs', 'start', CLI_AGENT, '--message', 'please [fail]', '--wait'], creds);
    expect(failed.code).to.equal(8);
    expect(failed.stdout).to.match(/^status +failed$/mu);
  });

  it('refuses what the command line gets wrong with exit 2, before any request', async function () {
    const creds = { SVC_BASE_URL: api.base, SVC_API_KEY: API_KEY };
    const cases: [string[], RegExp][] = [
      [['runs', 'start', CLI_AGENT, '--fil', 'x'], /unknown option '--fil'/u],
      [['runs', 'start', CLI_AGENT, '--file', 'just-a-key'], /must be written KEY:NAME:TYPE/u],
      [['runs', 'start', CLI_AGENT], /at least one --upload or --file, or a --message/u],
      [['runs', 'start', CLI_AGENT, '--upload', join(home, 'absent.pdf')], /cannot read .*absent\.pdf: ENOENT/u],
      [['runs', 'start', CLI_AGENT, '--upload', home], /--upload .* is not a regular file/u],
      [['files', 'upload', join(home, 'absent.pdf')], /cannot read .*absent\.pdf: ENOENT/u],
      [['files', 'list', '--status', 'done'], /argument 'done' is invalid/u],
      [['files', 'get'], /missing required argument 'file_key'/u],
      [['records', 'insert', SQL_CONNECTION, 'dbo.orders', 'qty=12345678901234567890'], /more than 15 significant digits/u],
      [['records', 'insert', SQL_CONNECTION, 'dbo.orders', 'qty'], /must be written COLUMN=VALUE/u],
      [['records', 'update', SQL_CONNECTION, 'dbo.orders', 'qty=1'], /required option '-k, --key/u],
      [['runs'], /missing command: one of start, get, list/u],
      [['-o', 'yaml', 'index'], /argument 'yaml' is invalid/u],
    ];
    // Refused before any request: independent processes, all at once.
    const results = await Promise.all(cases.map(([args]) => svc(args, creds)));
    for (const [i, [args, message]] of cases.entries()) {
      const result = results[i]!;
      expect(result.code, args.join(' ')).to.equal(2);
      expect(result.stderr, args.join(' ')).to.match(message);
    }
  });

  it('uploads files (printed ready with size and SHA-256), lists, reads and deletes them', async function () {
    const creds = { SVC_BASE_URL: api.base, SVC_API_KEY: API_KEY };
    const pdf = join(home, 'invoice-17.pdf');
    await writeFile(pdf, PDF_BYTES);
    const upload = await svc(['files', 'upload', pdf], creds);
    expect(upload.code, upload.stderr).to.equal(0);
    expect(upload.stdout).to.match(/^status +ready$/mu).and.match(/^content_type +application\/pdf$/mu).and.match(/^file_name +invoice-17\.pdf$/mu);
    expect(upload.stdout).to.match(new RegExp(`^size_bytes +${PDF_BYTES.length}$`, 'mu')).and.match(new RegExp(`^sha256 +${sha256Hex(PDF_BYTES)}$`, 'mu'));
    const key = /^file_key +(\S+)$/mu.exec(upload.stdout)?.[1] ?? '';

    const csv = join(home, 'export.dat');
    await writeFile(csv, CSV_BYTES);
    const typed = await svc(['files', 'upload', csv, '--content-type', 'text/csv', '--name', 'orders.csv', '-o', 'json'], creds);
    expect(typed.code, typed.stderr).to.equal(0);
    const file = JSON.parse(typed.stdout) as { file_key: string; file_name: string; content_type: string; status: string; sha256: string };
    expect([file.file_name, file.content_type, file.status, file.sha256]).to.deep.equal(['orders.csv', 'text/csv', 'ready', sha256Hex(CSV_BYTES)]);

    const got = await svc(['files', 'get', key, '-o', 'json'], creds);
    expect((JSON.parse(got.stdout) as { status: string }).status).to.equal('ready');
    const page = await svc(['files', 'list', '--limit', '1'], creds);
    expect(page.code, page.stderr).to.equal(0);
    expect(page.stdout).to.match(/^file_key +file_name +content_type +size_bytes +status +created_at$/mu).and.contain(file.file_key);
    expect(page.stdout.trim().split('\n')).to.have.length(2);
    expect(page.stderr).to.match(/^more: svc files list --cursor \S+/mu);
    const all = await svc(['files', 'list', '--limit', '1', '--all', '--status', 'ready', '-o', 'json'], creds);
    const listed = JSON.parse(all.stdout) as { data: { file_key: string }[]; next_cursor: string | null };
    expect(listed.data.map((f) => f.file_key)).to.include.members([key, file.file_key]);
    expect(listed.next_cursor).to.equal(null);

    const deleted = await svc(['files', 'delete', file.file_key], creds);
    expect([deleted.code, deleted.stdout]).to.deep.equal([0, `file ${file.file_key} deleted\n`]);
    const gone = await svc(['files', 'get', file.file_key], creds);
    expect([gone.code, /^svc: 404 not_found: /u.test(gone.stderr)]).to.deep.equal([4, true]);
  });

  it('runs start --upload uploads each file, then starts the run with them; --wait shows what the run read (size, SHA-256)', async function () {
    const creds = { SVC_BASE_URL: api.base, SVC_API_KEY: API_KEY };
    const pdf = join(home, 'statement.pdf');
    const csv = join(home, 'lines.csv');
    await writeFile(pdf, PDF_BYTES);
    await writeFile(csv, CSV_BYTES);
    const started = await svc(['runs', 'start', CLI_AGENT, '--upload', pdf, '--upload', csv, '--message', 'Reconcile', '--wait', '-o', 'json'], creds);
    expect(started.code, started.stderr).to.equal(0);
    const uploaded = started.stderr.split('\n').filter((line) => line.startsWith('uploaded '));
    expect(uploaded).to.have.length(2);
    expect(uploaded[0]).to.match(new RegExp(`^uploaded ${pdf}: file_[0-9a-f]{32} \\(application/pdf, ${PDF_BYTES.length} bytes, sha256 ${sha256Hex(PDF_BYTES)}\\)$`, 'u'));
    const run = JSON.parse(started.stdout) as { status: string; output: { files: number; read_files: { file_key: string; file_name: string; content_type: string; size_bytes: number; sha256: string }[] } };
    expect(run.status).to.equal('succeeded');
    expect(run.output.files).to.equal(2);
    expect(run.output.read_files.map(({ file_name, content_type, size_bytes, sha256 }) => ({ file_name, content_type, size_bytes, sha256 }))).to.deep.equal([
      { file_name: 'statement.pdf', content_type: 'application/pdf', size_bytes: PDF_BYTES.length, sha256: sha256Hex(PDF_BYTES) },
      { file_name: 'lines.csv', content_type: 'text/csv', size_bytes: CSV_BYTES.length, sha256: sha256Hex(CSV_BYTES) },
    ]);
    expect(run.output.read_files[0]?.file_key).to.equal(/file_[0-9a-f]{32}/u.exec(uploaded[0] ?? '')?.[0]);

    // The table form shows the output as JSON in its cell.
    const table = await svc(['runs', 'start', CLI_AGENT, '--upload', pdf, '--wait'], creds);
    expect(table.code, table.stderr).to.equal(0);
    expect(table.stdout).to.match(/^status +succeeded$/mu).and.match(new RegExp(`^output +.*"size_bytes":${PDF_BYTES.length},"sha256":"${sha256Hex(PDF_BYTES)}"`, 'mu'));
  });

  it('exits 5 with the reason when the API rejects an upload (PNG bytes named .pdf), and starts no run', async function () {
    const creds = { SVC_BASE_URL: api.base, SVC_API_KEY: API_KEY };
    const fake = join(home, 'scan.pdf');
    await writeFile(fake, PNG_BYTES);
    const upload = await svc(['files', 'upload', fake], creds);
    expect(upload.code).to.equal(5);
    expect(upload.stdout).to.equal('');
    expect(upload.stderr).to.match(/^svc: file rejected: scan\.pdf: The bytes are image\/png, not the declared application\/pdf\.$/mu).and.match(/^ {2}file key: file_[0-9a-f]{32}$/mu);
    const json = await svc(['files', 'upload', fake, '-o', 'json'], creds);
    const failure = JSON.parse(json.stderr) as { error: string; detail: string; file: { status: string } };
    expect([json.code, failure.error, failure.file.status]).to.deep.equal([5, 'file_rejected', 'rejected']);

    const before = JSON.parse((await svc(['runs', 'list', '--agent', CLI_AGENT, '--limit', '1', '-o', 'json'], creds)).stdout) as { data: { run_id: string }[] };
    const run = await svc(['runs', 'start', CLI_AGENT, '--upload', fake, '--wait'], creds);
    expect(run.code).to.equal(5);
    expect(run.stderr).to.contain('file rejected: scan.pdf');
    const after = JSON.parse((await svc(['runs', 'list', '--agent', CLI_AGENT, '--limit', '1', '-o', 'json'], creds)).stdout) as { data: { run_id: string }[] };
    expect(after.data[0]?.run_id).to.equal(before.data[0]?.run_id);
  });

  it('exits 7 when nothing answers, after retrying the refused connection', async function () {
    const port = await freePort();
    const result = await svc(['runs', 'get', 'r1', '--base-url', `http://127.0.0.1:${port}`, '--api-key', API_KEY]);
    expect(result.code).to.equal(7);
    expect(result.stderr.match(/retrying in/gu)).to.have.length(3);
    expect(result.stderr).to.contain('no answer (connection refused)');
  });

  it('shows a spinner rewritten in place on a terminal (under a pseudo-terminal)', async function () {
    const script = spawnSync('script', ['--version'], { encoding: 'utf8' });
    if (script.status !== 0) this.skip(); // util-linux is on every Debian machine and in CI
    // A terminal user's environment: no CI variable (yocto-spinner, like most tools, stops animating under CI).
    const ptyEnv: NodeJS.ProcessEnv = { ...env, SVC_BASE_URL: api.base, SVC_API_KEY: API_KEY, TERM: 'xterm-256color' };
    delete ptyEnv['CI'];
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} runs start ${CLI_AGENT} --message "on a terminal" --wait`;
    const result = await run('script', ['-qfec', command, '/dev/null'], ptyEnv);
    expect(result.code, result.stdout).to.equal(0);
    // A frame, then the same line rewritten (cursor to column 1, erase line), then ✔ and the run.
    expect(result.stdout).to.match(/\u001b\[1G\u001b\[0K/u);
    expect(result.stdout).to.match(/✔.*run [0-9a-f-]{36}: succeeded/u);
    expect(result.stdout).to.match(/^status +succeeded\r?$/mu);
  });

  it('prints shell completion scripts and completes commands and options', async function () {
    const bash = await svc(['completion', 'bash']);
    expect(bash.code).to.equal(0);
    expect(bash.stdout).to.contain('svc complete --');
    const commands = await svc(['complete', '--', 'runs', 'st']);
    expect(commands.stdout).to.match(/^start\t/mu);
    const options = await svc(['complete', '--', 'records', 'insert', '--']);
    expect(options.stdout).to.match(/^--egress\t/mu).and.match(/^--json\t/mu);
  });

  it('runs from the repository root as pnpm svc, with and without a leading --', async function () {
    const forms = [['svc', '--version'], ['svc', '--', '--version']];
    const results = await Promise.all(forms.map((args) => run('pnpm', args, env)));
    for (const result of results) {
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout.trim().split('\n').at(-1)).to.match(/^\d+\.\d+\.\d+$/u);
    }
  });
});
