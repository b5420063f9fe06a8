/**
 * `svc`, the command-line client of the public API (issue 14 item 2), on commander and the
 * typed client `@svc/client`. Every failure is a few lines on stderr and an exit code of
 * {@link EXIT_CODES}; results are written to stdout only.
 */
import { constants } from 'node:fs';
import { access, readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import tab from '@bomb.sh/tab/commander';
import { SvcApiError, SvcClient, SvcFileRejectedError, SvcNetworkError, type File, type FileStatus, type Run, type StartRunRequest, type FileReference } from '@svc/client';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { formatFailure, formatResult, OUTPUT_FORMATS, table, type OutputFormat } from './output.js';
import { profilePath, PROFILE_ENV, ProfileError, readProfile, removeProfile, writeProfile, type Profile } from './profile.js';
import { plainProgress, terminalProgress, type RunProgress } from './progress.js';
import { NotationError, parseAssignments, parseFileReference, parseScalar, parseValuesJson, splitAssignment } from './values.js';

/** The CLI's name, as the `bin` of `@svc/cli` installs it. */
export const PROGRAM_NAME = 'svc';
/** Where the API is when neither a flag, the environment nor the profile says: `pnpm start`'s address. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
/** This package's version (`svc --version`): its package.json, beside dist/ and src/ alike. */
const VERSION = String((createRequire(import.meta.url)('../package.json') as { version: unknown }).version);

/**
 * Exit codes of `svc`, by class of failure (printed at the end of every `--help`, and in
 * docs/decisions.md "Command-line client"). A script can tell "fix the request" (2, 5) from
 * "fix the credential" (3), "wait and retry" (6, 7) and "the run itself failed" (8).
 */
export const EXIT_CODES = {
  ok: 0,
  /** An unexpected error: a bug (one line, no stack trace). */
  failure: 1,
  /** The command line: unknown command or option, a missing or malformed argument, no credential, an unreadable file. */
  usage: 2,
  /** The credential: 401 (missing, invalid, expired, unsupported) or 403 (insufficient scope). */
  auth: 3,
  /** 404: no such agent, run or connection, or not the caller's. */
  notFound: 4,
  /** Any other 4xx: the API refused the request (400 validation, writes not supported, 409, 413, 415, 422); or an uploaded file ended `rejected`. */
  rejected: 5,
  /** 429 still after the client's retries (or a `Retry-After` longer than it waits). */
  rateLimited: 6,
  /** 5xx still after the retries, or no answer (connection refused, reset, timeout). */
  unavailable: 7,
  /** `--wait`: the run ended `failed` or `cancelled` (it is printed as for success). */
  runNotSucceeded: 8,
  /** Interrupted (Ctrl-C, SIGINT): 128 + 2, the shell's convention. */
  interrupted: 130,
} as const;

const EPILOGUE = `
Where the API is and who you are, first found wins:
  1. --base-url, --api-key or --access-token
  2. SVC_BASE_URL, SVC_API_KEY or SVC_ACCESS_TOKEN
  3. the profile svc login writes: $${PROFILE_ENV}, else $XDG_CONFIG_HOME/svc/config.json,
     else ~/.config/svc/config.json (mode 0600)
  The base URL defaults to ${DEFAULT_BASE_URL}. With an API key and an access token at the same
  level, the API key is used (access tokens work on the run operations only).

Requests refused with 429 or 503 are retried after their Retry-After (3 times at most, a wait of
60 s at most); a request that timed out is never retried. Results go to stdout; progress and
failures to stderr (--output json: the problem details JSON as the API sent it).

Exit codes:
  ${EXIT_CODES.ok}    done
  ${EXIT_CODES.failure}    an unexpected error (a bug)
  ${EXIT_CODES.usage}    usage: unknown command or option, bad or missing argument, no credential
  ${EXIT_CODES.auth}    credential refused: 401, or 403 (an access token without the scope)
  ${EXIT_CODES.notFound}    not found: no such agent, run or connection (404)
  ${EXIT_CODES.rejected}    request refused: 400 (validation, writes not supported, ...), 409, 413, 415, 422;
       or an uploaded file was rejected (its bytes contradict its type, size or SHA-256)
  ${EXIT_CODES.rateLimited}    rate limited: 429 after the retries
  ${EXIT_CODES.unavailable}    unavailable: 5xx after the retries, or no answer (refused, reset, timeout)
  ${EXIT_CODES.runNotSucceeded}    --wait: the run ended failed or cancelled
  ${EXIT_CODES.interrupted}  interrupted (Ctrl-C); a run already started goes on`;

/** Where `svc` reads and writes; `main.ts` gives it the process's own. */
export interface CliEnvironment {
  /** Environment variables (`SVC_BASE_URL`, `SVC_API_KEY`, `SVC_ACCESS_TOKEN`, `SVC_CLI_CONFIG`, `XDG_CONFIG_HOME`). */
  readonly env: NodeJS.ProcessEnv;
  /** Writes results and help. */
  readonly stdout: (text: string) => void;
  /** Writes failures and plain progress lines. */
  readonly stderr: (text: string) => void;
  /** The terminal for the progress spinner, when stderr is one; undefined otherwise. */
  readonly terminal: NodeJS.WriteStream | undefined;
  /** Reads all of standard input (`--json -`, `svc login` with the credential piped in). */
  readonly readStdin: () => Promise<string>;
  /** Whether standard input is a terminal (then `svc login` does not read it). */
  readonly stdinIsTerminal: boolean;
  /** Aborted on SIGINT: cancels the request or the wait under way. */
  readonly interrupt: AbortSignal;
}

/** A command line that cannot be carried out as written (exit 2). */
class UsageError extends Error {}

/** Commander's failure to parse `command`'s arguments. */
class ParseFailure extends Error {
  constructor(
    readonly command: Command,
    readonly failure: CommanderError,
  ) {
    super(failure.message);
  }
}

/** A run that `--wait` saw end other than `succeeded` (already printed). */
class RunNotSucceeded extends Error {}

/** The options every command takes (on the root command). */
interface GlobalOptions {
  readonly baseUrl?: string;
  readonly apiKey?: string;
  readonly accessToken?: string;
  readonly output: OutputFormat;
}

/** Where the API is and which credential, once resolved (flags > environment > profile). */
interface Target {
  readonly baseUrl: string;
  readonly apiKey?: string;
  readonly accessToken?: string;
}

/**
 * Runs one `svc` command line.
 *
 * @param argv - the arguments after the program (`process.argv.slice(2)`); a leading `--`
 *   (which pnpm 12 passes on from `pnpm svc -- …`) is dropped.
 * @returns the exit code ({@link EXIT_CODES}); output and failure lines are already written.
 */
export async function runCli(argv: readonly string[], environment: CliEnvironment): Promise<number> {
  const program = buildProgram(environment);
  let acting = program;
  program.hook('preAction', (_program, action) => void (acting = action));
  const args = argv[0] === '--' ? argv.slice(1) : [...argv];
  try {
    await program.parseAsync(args, { from: 'user' });
    return EXIT_CODES.ok;
  } catch (error) {
    const [command, failure] = error instanceof ParseFailure ? [error.command, error.failure] : [acting, error];
    const output = outputOf(program);
    if (environment.interrupt.aborted) {
      environment.stderr(`${pathOf(command)}: interrupted\n`);
      return EXIT_CODES.interrupted;
    }
    if (failure instanceof SvcApiError || failure instanceof SvcNetworkError || failure instanceof SvcFileRejectedError) {
      environment.stderr(formatFailure(output, failure));
      if (failure instanceof SvcFileRejectedError) return EXIT_CODES.rejected;
      return failure instanceof SvcNetworkError ? EXIT_CODES.unavailable : exitCodeOf(failure);
    }
    if (failure instanceof RunNotSucceeded) return EXIT_CODES.runNotSucceeded;
    const [code, message] = failureOf(failure, command);
    if (message !== undefined) environment.stderr(`${pathOf(command)}: ${message.replace(/\s*\n\s*/gu, ' ')}\n`);
    return code;
  }
}

/** The exit code of an error answer (see {@link EXIT_CODES}). */
export function exitCodeOf(error: SvcApiError): number {
  if (error.status === 401 || error.status === 403) return EXIT_CODES.auth;
  if (error.status === 404) return EXIT_CODES.notFound;
  if (error.status === 429) return EXIT_CODES.rateLimited;
  if (error.status >= 500) return EXIT_CODES.unavailable;
  return EXIT_CODES.rejected;
}

/** `--output` as parsed (table when the parse failed before it). */
function outputOf(program: Command): OutputFormat {
  const value = program.opts<Partial<GlobalOptions>>().output;
  return value === 'json' ? 'json' : 'table';
}

/** The exit code and the line (absent: nothing to say) for a failure that is not the API's. */
function failureOf(error: unknown, command: Command): [number, string | undefined] {
  if (error instanceof UsageError || error instanceof NotationError) return [EXIT_CODES.usage, error.message];
  if (error instanceof ProfileError) return [EXIT_CODES.usage, error.message];
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || (error.code === 'commander.help' && error.exitCode === 0)) return [EXIT_CODES.ok, undefined];
    const help = `(see ${pathOf(command)} --help)`;
    if (error.code === 'commander.help') {
      const names = command.commands.map((c) => c.name()).filter((n) => n !== 'help' && n !== 'complete');
      return [EXIT_CODES.usage, `missing command: one of ${names.join(', ')} ${help}`];
    }
    return [EXIT_CODES.usage, `${error.message.replace(/^error: /u, '')} ${help}`];
  }
  return [EXIT_CODES.failure, `unexpected error: ${error instanceof Error ? error.message : String(error)}`];
}

/** `svc runs start`, for messages. */
function pathOf(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Collects a repeatable option's values. */
function collect(value: string, previous: readonly string[] = []): string[] {
  return [...previous, value];
}

/** The statuses of a file, for `--status` (docs/CONTRACT.md "Files"). */
const FILE_STATUSES = ['pending', 'ready', 'rejected', 'expired'] as const satisfies readonly FileStatus[];

/**
 * Refuses (exit 2, before any request) a path that is not a readable regular file.
 *
 * @returns its size in bytes.
 */
async function readableFile(path: string, option: string): Promise<number> {
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new UsageError(`${option} ${path} is not a regular file`);
    await access(path, constants.R_OK);
    return info.size;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer.');
  return n;
}

/** One credential. */
type Credential = { readonly apiKey: string; readonly accessToken?: undefined } | { readonly accessToken: string; readonly apiKey?: undefined };

/** The credential of one level: its API key, else its access token (see EPILOGUE). */
function credentialOf(apiKey: string | undefined, accessToken: string | undefined): Credential | undefined {
  const key = apiKey === '' ? undefined : apiKey;
  const token = accessToken === '' ? undefined : accessToken;
  if (key !== undefined) return { apiKey: key };
  if (token !== undefined) return { accessToken: token };
  return undefined;
}

function buildProgram(environment: CliEnvironment): Command {
  const { stdout, stderr, env } = environment;
  const print = (text: string): void => stdout(text.endsWith('\n') ? text : `${text}\n`);

  const program = new Command(PROGRAM_NAME)
    .description('The command-line client of the Agent Runs and Connected Data API: upload files, start agent runs and wait for them, write rows to connections.')
    .configureOutput({ writeOut: (text) => stdout(text), writeErr: () => undefined, outputError: () => undefined })
    .version(VERSION, '-V, --version', 'prints the version of svc')
    .addOption(new Option('--base-url <url>', `the API's base URL (env SVC_BASE_URL; default ${DEFAULT_BASE_URL})`))
    .addOption(new Option('--api-key <key>', 'an API key, sent as X-API-Key (env SVC_API_KEY)'))
    .addOption(new Option('--access-token <token>', 'an OAuth access token, sent as Authorization: Bearer (env SVC_ACCESS_TOKEN)'))
    .addOption(new Option('-o, --output <format>', 'how results and failures are printed').choices(OUTPUT_FORMATS).default('table'))
    .addHelpText('afterAll', EPILOGUE);

  const globals = (command: Command): GlobalOptions => command.optsWithGlobals<GlobalOptions>();

  /** Base URL and credential by precedence: flags, then the environment, then the profile. */
  const target = async (command: Command): Promise<Target & { profile: Profile }> => {
    const options = globals(command);
    const profile = await readProfile(profilePath(env));
    const baseUrl = options.baseUrl ?? (env['SVC_BASE_URL'] || undefined) ?? profile.base_url ?? DEFAULT_BASE_URL;
    if (!/^https?:\/\/[^/]/u.test(baseUrl)) throw new UsageError(`the base URL must be an http:// or https:// URL, got ${JSON.stringify(baseUrl)}`);
    const credential =
      credentialOf(options.apiKey, options.accessToken) ?? credentialOf(env['SVC_API_KEY'], env['SVC_ACCESS_TOKEN']) ?? credentialOf(profile.api_key, profile.access_token) ?? {};
    return { baseUrl, ...credential, profile };
  };

  /** A client for `command`; with `needsCredential`, no credential anywhere is a usage error. */
  const clientFor = async (command: Command, needsCredential = true): Promise<SvcClient> => {
    const t = await target(command);
    if (needsCredential && t.apiKey === undefined && t.accessToken === undefined) {
      throw new UsageError('no credential: give --api-key or --access-token, set SVC_API_KEY or SVC_ACCESS_TOKEN, or run svc login');
    }
    return new SvcClient({
      baseUrl: t.baseUrl,
      apiKey: t.apiKey,
      accessToken: t.accessToken,
      onRetry: ({ error, delayMs, attempt }) => {
        const why = error instanceof SvcApiError ? `${error.status}${error.code === undefined ? '' : ` ${error.code}`}` : error.kind.replace('_', ' ');
        stderr(`svc: ${why}; retrying in ${(delayMs / 1000).toFixed(delayMs < 1000 ? 1 : 0)} s (retry ${attempt})\n`);
      },
    });
  };

  const signal = environment.interrupt;

  /** Waits for `runId` to end, showing progress on stderr; prints the run; fails with exit 8 unless it succeeded. */
  const waitAndPrint = async (client: SvcClient, runId: string, output: OutputFormat): Promise<void> => {
    const progress: RunProgress = environment.terminal !== undefined ? terminalProgress(environment.terminal) : plainProgress(stderr);
    let run: Run;
    try {
      run = await client.waitForRun(runId, { signal, onStatus: (r) => progress.update(r) });
    } catch (error) {
      progress.stop();
      if (signal.aborted) stderr(`the run goes on; follow it with: svc runs get ${runId} --wait\n`);
      throw error;
    }
    progress.finish(run);
    print(formatResult(output, run));
    if (run.status !== 'succeeded') throw new RunNotSucceeded();
  };

  program
    .command('index')
    .description('prints the API index (GET /api/v1): name, version, addresses, authentication, limits; needs no credential')
    .action(async (_options: object, command: Command) => {
      const index = await (await clientFor(command, false)).index({ signal });
      const output = globals(command).output;
      if (output === 'json') print(formatResult('json', index));
      else {
        print(
          formatResult('table', {
            name: index.name,
            version: index.version,
            base_url: index.base_url,
            documentation_url: index.documentation_url,
            openapi_url: index.openapi_url,
            authentication: index.authentication.methods.map((m) => `${m.type} (${m.headers.join(', ')})`).join('; '),
            rate_limits: `${index.rate_limits.requests} requests / ${index.rate_limits.window_seconds} s per ${index.rate_limits.scope}`,
            cli: index.clients.cli,
            cli_documentation_url: index.clients.cli_documentation_url,
          }),
        );
      }
    });

  program
    .command('openapi')
    .description('prints the OpenAPI 3.1 document the API serves (YAML); needs no credential')
    .action(async (_options: object, command: Command) => {
      stdout(await (await clientFor(command, false)).openApiDocument({ signal }));
    });

  program
    .command('login')
    .description(
      `stores the base URL and a credential in the profile (mode 0600) after checking them against the API; ` +
        `the credential from --api-key/--access-token, else SVC_API_KEY/SVC_ACCESS_TOKEN, else one line on standard input (never asked at a terminal)`,
    )
    .option('--no-verify', 'store without asking the API')
    .action(async (options: { verify: boolean }, command: Command) => {
      const t = await target(command);
      const path = profilePath(env);
      const given = globals(command);
      let credential = credentialOf(given.apiKey, given.accessToken) ?? credentialOf(env['SVC_API_KEY'], env['SVC_ACCESS_TOKEN']);
      if (credential === undefined && !environment.stdinIsTerminal) {
        const line = (await environment.readStdin()).trim();
        credential = line.startsWith('svcpt_') ? { accessToken: line } : credentialOf(line, undefined);
      }
      if (credential === undefined) throw new UsageError('no credential to store: give --api-key or --access-token, set SVC_API_KEY, or pipe the key on standard input');
      if (options.verify) {
        const client = new SvcClient({ baseUrl: t.baseUrl, ...credential, maxRetries: 0 });
        const index = await client.index({ signal });
        // An API key can list agents; an access token may only hold run scopes, so only the index is checked for it.
        if (credential.apiKey !== undefined) await client.listAgents({ limit: 1 }, { signal });
        stderr(`logged in to ${index.name} at ${t.baseUrl}\n`);
      }
      await writeProfile(path, { base_url: t.baseUrl, ...(credential.apiKey !== undefined ? { api_key: credential.apiKey } : { access_token: credential.accessToken }) });
      print(`profile written to ${path}`);
    });

  program
    .command('logout')
    .description('removes the profile svc login wrote')
    .action(async () => {
      const path = profilePath(env);
      print((await removeProfile(path)) ? `profile ${path} removed` : `no profile at ${path}`);
    });

  const runs = program.command('runs').description('starts runs, reads them and waits for them');

  runs
    .command('start')
    .description('starts a run of AGENT with files (--upload, --file), a message, or both (POST /api/v1/agents/{agent_id}/run)')
    .argument('<agent>', 'the agent id')
    .option('-u, --upload <path>', 'a file to upload first (svc files upload), then for the agent to read; its type from its extension (repeatable)', collect, [])
    .option('-f, --file <key:name:type>', 'an uploaded file the agent reads: its file key, file name and media type (repeatable; 1 to 50, --upload included)', collect, [])
    .option('-b, --background-file <key:name:type>', 'a file available to the tools only (repeatable; at most 10)', collect, [])
    .option('-m, --message <text>', 'the instruction or text for the agent')
    .option('--notify <email>', 'an e-mail address to notify when the run ends')
    .option('--process-together', 'process the files in one agent conversation')
    .option('-w, --wait', 'wait for the run to end; show its progress')
    .addHelpText(
      'after',
      `\nEach --upload is uploaded (prepare, PUT, complete) before the run starts, in the order given, after the --file ones;\n` +
        `a file the API rejects stops the command before the run (exit ${EXIT_CODES.rejected}).\n` +
        `\nExamples:\n  svc runs start agent_demo --message "Summarise the orders of yesterday" --wait\n  svc runs start agent_demo --upload invoice-17.pdf --upload orders.csv --message "Extract the totals" --wait\n  svc runs start agent_demo --file file_3f2a9c0d5e6b47a18c9d0e1f2a3b4c5d:invoice-17.pdf:application/pdf`,
    )
    .action(async (agent: string, options: { upload: string[]; file: string[]; backgroundFile: string[]; message?: string; notify?: string; processTogether?: boolean; wait?: boolean }, command: Command) => {
      const named: FileReference[] = options.file.map((f) => parseFileReference(f, '--file'));
      const background: FileReference[] = options.backgroundFile.map((f) => parseFileReference(f, '--background-file'));
      if (named.length === 0 && options.upload.length === 0 && options.message === undefined) throw new UsageError('give at least one --upload or --file, or a --message');
      for (const path of options.upload) await readableFile(path, '--upload');
      const client = await clientFor(command);
      const uploaded: FileReference[] = [];
      for (const path of options.upload) {
        const file = await client.uploadFile(path, {}, { signal });
        stderr(`uploaded ${path}: ${file.file_key} (${file.content_type}, ${file.size_bytes} bytes, sha256 ${file.sha256 ?? '?'})\n`);
        uploaded.push({ file_key: file.file_key, file_name: file.file_name, content_type: file.content_type });
      }
      const files = [...named, ...uploaded];
      // The two shapes of the body (docs/CONTRACT.md "Runs"); whatever else is wrong with it, the API says.
      const body = {
        ...(files.length > 0 ? { files } : {}),
        ...(options.message !== undefined ? { message: options.message } : {}),
        ...(options.processTogether === true ? { process_together: true } : {}),
        ...(options.notify !== undefined ? { notification_email: options.notify } : {}),
        ...(background.length > 0 ? { background_files: background } : {}),
      } as StartRunRequest;
      const started = await client.startRun(agent, body, { signal });
      const output = globals(command).output;
      if (options.wait === true) await waitAndPrint(client, started.run_id, output);
      else print(formatResult(output, started));
    });

  runs
    .command('get')
    .description('prints a run (GET /api/v1/runs/{run_id}); with --wait, waits for it to end')
    .argument('<run>', 'the run id')
    .option('-w, --wait', 'wait for the run to end; show its progress')
    .action(async (runId: string, options: { wait?: boolean }, command: Command) => {
      const client = await clientFor(command);
      const output = globals(command).output;
      if (options.wait === true) await waitAndPrint(client, runId, output);
      else print(formatResult(output, await client.getRun(runId, { signal })));
    });

  runs
    .command('list')
    .description('lists your runs, newest first (GET /api/v1/runs), one page')
    .option('--agent <agent>', 'only the runs of this agent')
    .option('--status <status>', 'only the runs in this status (queued, running, succeeded, failed, cancelled)')
    .option('--limit <n>', 'runs on the page (1..100; default 20)', positiveInteger)
    .option('--cursor <cursor>', 'the next_cursor of the page before')
    .action(async (options: { agent?: string; status?: Run['status']; limit?: number; cursor?: string }, command: Command) => {
      const client = await clientFor(command);
      const page = await client.listRuns(
        {
          ...(options.agent !== undefined ? { agent_id: options.agent } : {}),
          ...(options.status !== undefined ? { status: options.status } : {}),
          ...(options.limit !== undefined ? { limit: options.limit } : {}),
          ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
        },
        { signal },
      );
      if (globals(command).output === 'json') print(formatResult('json', page));
      else {
        stdout(table(['run_id', 'agent_id', 'status', 'created_at'], page.data.map((r) => [r.run_id, r.agent_id, r.status, r.created_at])));
        if (page.next_cursor !== null) stderr(`more: svc runs list --cursor ${page.next_cursor}\n`);
      }
    });

  const fileCommands = program.command('files').description('uploads files for runs to read, lists, reads and deletes them');

  /** A file in the format asked for (table: one field a line). */
  const printFile = (file: File, command: Command): void => print(formatResult(globals(command).output, file));

  fileCommands
    .command('upload')
    .description('uploads a file (POST /api/v1/files, PUT of its bytes, POST .../complete) and prints it, ready for runs start --file')
    .argument('<path>', 'the file to upload')
    .option('-t, --content-type <type>', 'its media type (default: by its extension, else application/octet-stream)')
    .option('--name <file_name>', 'its file_name (default: the last part of PATH)')
    .addHelpText(
      'after',
      `\nThe file is read twice, never held in memory: once for its SHA-256 (declared, so the server refuses\n` +
        `other bytes), once to send it. The server checks its size, digest and content against the type;\n` +
        `a file it rejects is printed on stderr with the reason (exit ${EXIT_CODES.rejected}).\n` +
        `\nExamples:\n  svc files upload invoice-17.pdf\n  svc files upload export.dat --content-type text/csv --name orders.csv -o json`,
    )
    .action(async (path: string, options: { contentType?: string; name?: string }, command: Command) => {
      await readableFile(path, 'PATH');
      const client = await clientFor(command);
      const details = { ...(options.contentType !== undefined ? { contentType: options.contentType } : {}), ...(options.name !== undefined ? { fileName: options.name } : {}) };
      printFile(await client.uploadFile(path, details, { signal }), command);
    });

  fileCommands
    .command('list')
    .description('lists your files, newest first (GET /api/v1/files), one page or --all')
    .addOption(new Option('--status <status>', 'only the files in this status').choices(FILE_STATUSES))
    .option('--limit <n>', 'files on a page (1..100; default 20)', positiveInteger)
    .option('--cursor <cursor>', 'the next_cursor of the page before')
    .option('--all', 'follow next_cursor to the last page')
    .action(async (options: { status?: FileStatus; limit?: number; cursor?: string; all?: boolean }, command: Command) => {
      const client = await clientFor(command);
      const listed: File[] = [];
      let cursor = options.cursor;
      let next: string | null;
      do {
        const page = await client.listFiles(
          {
            ...(options.status !== undefined ? { status: options.status } : {}),
            ...(options.limit !== undefined ? { limit: options.limit } : {}),
            ...(cursor !== undefined ? { cursor } : {}),
          },
          { signal },
        );
        listed.push(...page.data);
        next = page.next_cursor;
        cursor = next ?? undefined;
      } while (options.all === true && next !== null);
      if (globals(command).output === 'json') print(formatResult('json', { data: listed, next_cursor: next }));
      else {
        stdout(table(['file_key', 'file_name', 'content_type', 'size_bytes', 'status', 'created_at'], listed.map((f) => [f.file_key, f.file_name, f.content_type, f.size_bytes, f.status, f.created_at])));
        if (next !== null) stderr(`more: svc files list --cursor ${next}${options.status !== undefined ? ` --status ${options.status}` : ''} (or --all)\n`);
      }
    });

  fileCommands
    .command('get')
    .description('prints a file (GET /api/v1/files/{file_key}): its status, size, SHA-256, and why it was rejected')
    .argument('<file_key>', 'the file key')
    .action(async (fileKey: string, _options: object, command: Command) => {
      printFile(await (await clientFor(command)).getFile(fileKey, { signal }), command);
    });

  fileCommands
    .command('delete')
    .description('deletes a file, its record and bytes (DELETE /api/v1/files/{file_key})')
    .argument('<file_key>', 'the file key')
    .addHelpText('after', `\nA file that a queued or running run uses is not deleted (409 file_in_use, exit ${EXIT_CODES.rejected}).`)
    .action(async (fileKey: string, _options: object, command: Command) => {
      await (await clientFor(command)).deleteFile(fileKey, { signal });
      const output = globals(command).output;
      print(output === 'json' ? formatResult('json', { file_key: fileKey, deleted: true }) : `file ${fileKey} deleted`);
    });

  const records = program.command('records').description('writes single rows to a connection that allows writes (SQL Server)');

  const egressOption = () => new Option('--egress', 'route the database traffic through the stable egress address (X-Svc-Egress: true)');
  const jsonOption = () => new Option('--json <file>', 'the column values as a JSON object in FILE (- for standard input), instead of COL=VALUE arguments');
  const VALUES_HELP = `
Values: COL=VALUE, split at the first "=". VALUE is null, true, false, a number, or else text;
a double-quoted JSON string keeps text that looks like something else: code='"007"'.
Numbers of more than 15 significant digits are refused (they would be rounded): quote them.`;

  /** The `values` object from `--json` or the COL=VALUE arguments (not both). */
  const valuesOf = async (pairs: readonly string[], json: string | undefined): Promise<Record<string, string | number | boolean | null>> => {
    if (json !== undefined && pairs.length > 0) throw new UsageError('give COL=VALUE arguments or --json, not both');
    if (json === undefined) {
      if (pairs.length === 0) throw new UsageError('give the column values: COL=VALUE arguments, or --json FILE');
      return parseAssignments(pairs);
    }
    let text: string;
    try {
      text = json === '-' ? await environment.readStdin() : await readFile(json, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read ${json}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    return parseValuesJson(text, json === '-' ? 'standard input' : json);
  };

  records
    .command('insert')
    .description('inserts one row into ENTITY (schema.table) (POST /api/v1/connections/{connection_id}/records)')
    .argument('<connection>', 'the connection id (a UUID)')
    .argument('<entity>', 'the table, written schema.table')
    .argument('[values...]', 'COL=VALUE for each column of the new row')
    .addOption(jsonOption())
    .addOption(egressOption())
    .addHelpText('after', `${VALUES_HELP}\n\nExample:\n  svc records insert 6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f dbo.orders id=7 sku=B-7 qty=3 note=null`)
    .action(async (connection: string, entity: string, pairs: string[], options: { json?: string; egress?: boolean }, command: Command) => {
      const values = await valuesOf(pairs, options.json);
      const client = await clientFor(command);
      const result = await client.insertRecord(connection, { entity, values }, { signal, egress: options.egress === true });
      print(formatResult(globals(command).output, result));
    });

  records
    .command('update')
    .description('updates the one row of ENTITY whose key column has the key value (PATCH /api/v1/connections/{connection_id}/records)')
    .argument('<connection>', 'the connection id (a UUID)')
    .argument('<entity>', 'the table, written schema.table')
    .argument('[values...]', 'COL=VALUE for each column to change')
    .requiredOption('-k, --key <column=value>', 'the column that selects the row, and its value')
    .addOption(jsonOption())
    .addOption(egressOption())
    .addHelpText('after', `${VALUES_HELP}\n\nrows_affected is 0 when no row has the key; a key that selects several rows changes nothing (409, exit ${EXIT_CODES.rejected}).\n\nExample:\n  svc records update 6f9c1e2a-3b4d-4c5e-8f70-1a2b3c4d5e6f dbo.orders --key id=7 qty=4`)
    .action(async (connection: string, entity: string, pairs: string[], options: { key: string; json?: string; egress?: boolean }, command: Command) => {
      const [keyColumn, keyText] = splitAssignment(options.key, '--key');
      const keyValue = parseScalar(keyText, '--key');
      if (keyValue === null) throw new UsageError('--key: the key value cannot be null');
      const values = await valuesOf(pairs, options.json);
      const client = await clientFor(command);
      const result = await client.updateRecord(connection, { entity, key_column: keyColumn, key_value: keyValue, values }, { signal, egress: options.egress === true });
      print(formatResult(globals(command).output, result));
    });

  // Shell completion (@bomb.sh/tab): `svc completion bash|zsh|fish|powershell` prints the
  // script; the shell then calls the hidden `svc complete -- <words>`. Added last: it reads
  // the commands and options defined above.
  tab(program, { completionCommandName: 'completion' });

  // Each command's failures name it: `svc runs start: unknown option '--fil'`.
  const everyCommand = (command: Command): Command[] => [command, ...command.commands.flatMap(everyCommand)];
  for (const command of everyCommand(program)) {
    command.exitOverride((failure) => {
      throw new ParseFailure(command, failure);
    });
  }
  return program;
}
