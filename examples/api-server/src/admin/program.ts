/**
 * `svc-server`, the admin CLI of the API server (issue 13 part 3): accounts, API keys, OAuth
 * tokens, agents, connections and (PostgreSQL catalog) webhook endpoints of the catalog the configuration names, on commander.
 * Every failure is one line on stderr and an exit code of {@link EXIT_CODES}; nothing else
 * (no stack trace, no help text) is written to stderr.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { randomBytes, randomUUID } from 'node:crypto';
import { RUN_EVENT_TYPES, sha256Hex, SUPPORTED_SCOPES, WEBHOOK_SECRET_PREFIX } from '@svc/core';
import { newSecret } from '../dev-account.js';
import { CatalogAdminError, type CatalogAdmin, type CatalogAdminErrorKind, type CredentialEntry, type CredentialKind } from './catalog-admin.js';

/** The CLI's name, as the `bin` of `@svc/api-server` installs it. */
export const PROGRAM_NAME = 'svc-server';

/**
 * Exit codes of `svc-server` (documented in its `--help` and docs/decisions.md "Admin CLI").
 * 2 and 69 follow the BSD sysexits convention's spirit (usage; service unavailable).
 */
export const EXIT_CODES = {
  ok: 0,
  /** An unexpected error: a bug (one line, no stack trace). */
  failure: 1,
  /** Unknown command or option, missing or bad argument, no configuration file given. */
  usage: 2,
  /** The configuration, or the configuration after the change, does not validate. */
  invalid: 3,
  /** No such account, credential, agent or connection. */
  notFound: 4,
  /** The change would define an id or a digest twice, the account still owns resources, or the catalog changed meanwhile. */
  conflict: 5,
  /** The catalog cannot be read or written. */
  unavailable: 69,
} as const;

const EXIT_FOR_KIND = {
  not_found: EXIT_CODES.notFound,
  conflict: EXIT_CODES.conflict,
  invalid: EXIT_CODES.invalid,
  unavailable: EXIT_CODES.unavailable,
  // An operation this catalog does not do (webhook endpoints of a YAML file): a usage error, the line says what to do.
  unsupported: EXIT_CODES.usage,
} as const satisfies Record<CatalogAdminErrorKind, number>;

const EPILOGUE = `
The catalog: every command works on the catalog the configuration file names (--config FILE,
or the SVC_CONFIG environment variable): the YAML file itself, edited in place with its
comments kept, or, when the file has catalog.postgres, that PostgreSQL catalog (its URL in the
environment variable catalog.postgres.url_env names; run migrate once first). Every change is
validated before it is stored; a change that would define an id or a digest twice is refused,
naming both places. Secrets are printed once, on stdout; only their SHA-256 digests are stored.

Exit codes:
  ${EXIT_CODES.ok}   done
  ${EXIT_CODES.failure}   an unexpected error (a bug)
  ${EXIT_CODES.usage}   usage: unknown command or option, missing or bad argument, no --config, or a command
      the catalog does not do (webhook endpoints of a YAML file: edit the file)
  ${EXIT_CODES.invalid}   invalid configuration: the file, or the file after the change, does not validate
  ${EXIT_CODES.notFound}   not found: no such account, credential, agent, connection or webhook endpoint
  ${EXIT_CODES.conflict}   conflict: an id or a digest defined twice, an account that still owns
      resources, or the file changed while the command ran
  ${EXIT_CODES.unavailable}  catalog unavailable: the file cannot be read or written, the database cannot be
      reached, is not migrated (run migrate) or was migrated by a newer version`;

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

/** Where the CLI writes, and how it opens the catalog a configuration file names. */
export interface AdminEnvironment {
  /** Writes results and help (`process.stdout.write`). */
  readonly stdout: (text: string) => void;
  /** Writes the one line of a failure (`process.stderr.write`). */
  readonly stderr: (text: string) => void;
  /** Opens the catalog the configuration file at `configPath` (`--config`, or `SVC_CONFIG` from `process.env`) selects. */
  readonly openCatalog: (configPath: string) => Promise<CatalogAdmin>;
}

/**
 * Runs one `svc-server` command line.
 *
 * @param argv - the arguments after the program (`process.argv.slice(2)`).
 * @returns the exit code ({@link EXIT_CODES}); output and the one error line are already written.
 */
export async function runAdmin(argv: readonly string[], environment: AdminEnvironment): Promise<number> {
  const program = buildProgram(environment);
  // What an action throws is that command's failure.
  let acting = program;
  program.hook('preAction', (_program, action) => void (acting = action));
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT_CODES.ok;
  } catch (error) {
    const [command, failure] = error instanceof ParseFailure ? [error.command, error.failure] : [acting, error];
    const [code, message] = failureOf(failure, command);
    // One line, whatever the message held.
    if (message !== undefined) environment.stderr(`${pathOf(command)}: ${message.replace(/\s*\n\s*/gu, ' ')}\n`);
    return code;
  }
}

/** The exit code and the line (absent: nothing to say) for a failure of `command`. */
function failureOf(error: unknown, command: Command): [number, string | undefined] {
  if (error instanceof CatalogAdminError) return [EXIT_FOR_KIND[error.kind], error.message];
  if (error instanceof UsageError) return [EXIT_CODES.usage, error.message];
  if (error instanceof CommanderError) {
    // --help (and `help`): written to stdout already.
    if (error.code === 'commander.helpDisplayed' || (error.code === 'commander.help' && error.exitCode === 0)) return [EXIT_CODES.ok, undefined];
    const help = `(see ${pathOf(command)} --help)`;
    if (error.code === 'commander.help') {
      // A command that has subcommands was given none: commander would print the whole help to stderr.
      const names = command.commands.map((c) => c.name()).filter((n) => n !== 'help');
      return [EXIT_CODES.usage, `missing command: one of ${names.join(', ')} ${help}`];
    }
    return [EXIT_CODES.usage, `${error.message.replace(/^error: /u, '')} ${help}`];
  }
  return [EXIT_CODES.failure, `unexpected error: ${error instanceof Error ? error.message : String(error)}`];
}

/** `svc-server keys create`, for messages. */
function pathOf(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

function eventType(value: string, previous: readonly string[] = []): string[] {
  if (!(RUN_EVENT_TYPES as readonly string[]).includes(value)) throw new InvalidArgumentError(`must be one of ${RUN_EVENT_TYPES.join(', ')}.`);
  return previous.includes(value) ? [...previous] : [...previous, value];
}

function positiveDays(value: string): number {
  const days = Number(value);
  if (!Number.isFinite(days) || days <= 0) throw new InvalidArgumentError('must be a positive number of days.');
  return days;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new InvalidArgumentError('must be a TCP port (1-65535).');
  return n;
}

function scope(value: string, previous: readonly string[] = []): string[] {
  if (!(SUPPORTED_SCOPES as readonly string[]).includes(value)) throw new InvalidArgumentError(`must be one of ${SUPPORTED_SCOPES.join(', ')}.`);
  return previous.includes(value) ? [...previous] : [...previous, value];
}

const outputOption = () => new Option('-o, --output <format>', 'how to print the list').choices(['table', 'json']).default('table');
const accountFilter = () => new Option('-a, --account <id>', 'only this account');
const accountOption = () => new Option('-a, --account <id>', 'the account it belongs to').makeOptionMandatory();
const expiresOption = (what: string) => new Option('--expires-in-days <days>', what).argParser(positiveDays);

/** `2026-05-01T00:00:00.000Z` days from now. */
const daysFromNow = (days: number): Date => new Date(Date.now() + days * 86_400_000);

/** Rows as a table of left-aligned columns (a header line, then one line a row). */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [header, ...rows].map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

const NOUN: Record<CredentialKind, string> = { api_key: 'API key', oauth_token: 'OAuth token' };

function buildProgram(environment: AdminEnvironment): Command {
  const { stdout } = environment;
  const print = (text: string): void => stdout(text.endsWith('\n') ? text : `${text}\n`);
  const list = (format: string, json: readonly object[], header: readonly string[], rows: readonly (readonly string[])[]): void =>
    print(format === 'json' ? JSON.stringify(json, null, 2) : table(header, rows));

  const program = new Command(PROGRAM_NAME)
    .description('Administers the svc API server\'s catalog: accounts, API keys, OAuth tokens, agents and connections.')
    // Help goes to stdout; every error becomes the one line runAdmin writes.
    .configureOutput({ writeOut: (text) => stdout(text), writeErr: () => undefined, outputError: () => undefined })
    .addOption(new Option('-c, --config <file>', 'the configuration file that names the catalog').env('SVC_CONFIG'))
    .addHelpText('afterAll', EPILOGUE);

  /** Opens the catalog, runs `work` on it, closes it. */
  const withCatalog = async (command: Command, work: (catalog: CatalogAdmin) => Promise<void>): Promise<void> => {
    const config = command.optsWithGlobals<{ config?: string }>().config;
    if (config === undefined || config === '') throw new UsageError('no configuration file: pass --config FILE or set SVC_CONFIG');
    const catalog = await environment.openCatalog(config);
    try {
      await work(catalog);
    } finally {
      await catalog.close();
    }
  };

  const credentials = (kind: CredentialKind, group: Command): void => {
    const noun = NOUN[kind];
    const plural = `${noun}s`;
    const create = group
      .command('create')
      .description(`mints an ${noun}: prints its secret once and stores only its SHA-256 digest`)
      .argument('<id>', `the ${noun}'s id, unique across the catalog`)
      .addOption(accountOption())
      .addOption(expiresOption(`the ${noun} expires this many days from now (default: never)`));
    if (kind === 'oauth_token') {
      create.addOption(new Option('-s, --scope <scope>', `a scope it grants (${SUPPORTED_SCOPES.join(', ')}); repeat for more`).argParser(scope).makeOptionMandatory());
    }
    create.action(async (id: string, options: { account: string; expiresInDays?: number; scope?: string[] }, command: Command) => {
      await withCatalog(command, async (catalog) => {
        const secret = newSecret(kind === 'api_key' ? 'svc-' : 'svcpt_');
        const credential: CredentialEntry = {
          kind,
          id,
          accountId: options.account,
          sha256: sha256Hex(secret),
          scopes: options.scope ?? [],
          ...(options.expiresInDays === undefined ? {} : { expiresAt: daysFromNow(options.expiresInDays) }),
        };
        await catalog.addCredential(credential);
        printSecret(`${noun} "${id}" created in account "${options.account}"${expiryOf(credential)}`, catalog, secret);
      });
    });

    group
      .command('list')
      .description(`lists the ${plural} (digests, never secrets)`)
      .addOption(accountFilter())
      .addOption(outputOption())
      .action(async (options: { account?: string; output: string }, command: Command) => {
        await withCatalog(command, async (catalog) => {
          const found = await catalog.listCredentials(kind, options.account);
          list(
            options.output,
            found.map((c) => ({
              id: c.id,
              account_id: c.accountId,
              sha256: c.sha256,
              ...(kind === 'oauth_token' ? { scopes: c.scopes } : {}),
              expires_at: c.expiresAt?.toISOString() ?? null,
            })),
            ['ID', 'ACCOUNT', 'SHA256', ...(kind === 'oauth_token' ? ['SCOPES'] : []), 'EXPIRES_AT'],
            found.map((c) => [c.id, c.accountId, `${c.sha256.slice(0, 12)}…`, ...(kind === 'oauth_token' ? [c.scopes.join(',')] : []), c.expiresAt?.toISOString() ?? '-']),
          );
        });
      });

    group
      .command('revoke')
      .description(`revokes an ${noun}: it authenticates nothing once the server has reloaded the catalog`)
      .argument('<id>', `the ${noun}'s id`)
      .action(async (id: string, _options: object, command: Command) => {
        await withCatalog(command, async (catalog) => {
          const revoked = await catalog.revokeCredential(kind, id);
          print(`${noun} "${id}" of account "${revoked.accountId}" revoked in ${catalog.description}`);
        });
      });

    if (kind === 'api_key') {
      group
        .command('rotate')
        .description('gives an API key a new secret, printed once: the old secret stops working, the id, account and rate-limit window stay')
        .argument('<id>', "the API key's id")
        .addOption(expiresOption('the new secret expires this many days from now (default: the expiry stays)'))
        .action(async (id: string, options: { expiresInDays?: number }, command: Command) => {
          await withCatalog(command, async (catalog) => {
            const secret = newSecret('svc-');
            const expiresAt = options.expiresInDays === undefined ? undefined : daysFromNow(options.expiresInDays);
            const rotated = await catalog.rotateCredential(kind, id, sha256Hex(secret), expiresAt);
            printSecret(`${noun} "${id}" of account "${rotated.accountId}" rotated${expiryOf(rotated)}`, catalog, secret);
          });
        });
    }
  };

  const printSecret = (done: string, catalog: CatalogAdmin, secret: string): void =>
    print(`${done}; only its SHA-256 digest is stored, in ${catalog.description}.\nIts secret, shown this once:\n${secret}`);
  const expiryOf = (c: CredentialEntry): string =>
    `${c.scopes.length > 0 ? ` with scopes ${c.scopes.join(', ')}` : ''}${c.expiresAt === undefined ? '' : `, expiring at ${c.expiresAt.toISOString()}`}`;

  credentials('api_key', program.command('keys').description('API keys (X-API-Key: svc-…): create, list, revoke, rotate'));
  credentials('oauth_token', program.command('tokens').description('OAuth access tokens (Authorization: Bearer svcpt_…): create, list, revoke'));

  const accounts = program.command('accounts').description('accounts, which own credentials, agents and connections: add, list, remove');
  accounts
    .command('add')
    .description('adds an empty account')
    .argument('<id>', "the account's id, unique across the catalog")
    .action(async (id: string, _options: object, command: Command) => {
      await withCatalog(command, async (catalog) => {
        await catalog.addAccount(id);
        print(`account "${id}" added to ${catalog.description}`);
      });
    });
  accounts
    .command('list')
    .description('lists the accounts and how much each owns')
    .addOption(outputOption())
    .action(async (options: { output: string }, command: Command) => {
      await withCatalog(command, async (catalog) => {
        const found = await catalog.listAccounts();
        list(
          options.output,
          found.map((a) => ({ id: a.id, api_keys: a.apiKeys, oauth_tokens: a.oauthTokens, agents: a.agents, connections: a.connections })),
          ['ID', 'API_KEYS', 'OAUTH_TOKENS', 'AGENTS', 'CONNECTIONS'],
          found.map((a) => [a.id, String(a.apiKeys), String(a.oauthTokens), String(a.agents), String(a.connections)]),
        );
      });
    });
  accounts
    .command('remove')
    .description('removes an account; one that still owns anything is refused without --force')
    .argument('<id>', "the account's id")
    .option('--force', 'also remove its credentials (they stop working), agents and connections', false)
    .action(async (id: string, options: { force: boolean }, command: Command) => {
      await withCatalog(command, async (catalog) => {
        await catalog.removeAccount(id, { cascade: options.force });
        print(`account "${id}" removed from ${catalog.description}`);
      });
    });

  const agents = program.command('agents').description('agents of an account: add, list, remove');
  agents
    .command('add')
    .description('adds an agent to an account')
    .argument('<id>', "the agent's id, unique across the catalog (no '/', '?', '#' or spaces)")
    .addOption(accountOption())
    .option('-n, --name <name>', 'a display name')
    .action(async (id: string, options: { account: string; name?: string }, command: Command) => {
      await withCatalog(command, async (catalog) => {
        await catalog.addAgent({ id, accountId: options.account, ...(options.name === undefined ? {} : { name: options.name }) });
        print(`agent "${id}" added to account "${options.account}" in ${catalog.description}`);
      });
    });
  agents
    .command('list')
    .description('lists the agents')
    .addOption(accountFilter())
    .addOption(outputOption())
    .action(async (options: { account?: string; output: string }, command: Command) => {
      await withCatalog(command, async (catalog) => {
        const found = await catalog.listAgents(options.account);
        list(
          options.output,
          found.map((g) => ({ id: g.id, account_id: g.accountId, name: g.name ?? null })),
          ['ID', 'ACCOUNT', 'NAME'],
          found.map((g) => [g.id, g.accountId, g.name ?? '-']),
        );
      });
    });
  agents
    .command('remove')
    .description('removes an agent')
    .argument('<id>', "the agent's id")
    .action(async (id: string, _options: object, command: Command) => {
      await withCatalog(command, async (catalog) => {
        const removed = await catalog.removeAgent(id);
        print(`agent "${id}" removed from account "${removed.accountId}" in ${catalog.description}`);
      });
    });

  const connections = program.command('connections').description('database connections of an account: add, list, remove');
  connections
    .command('add')
    .description('adds a connection; a sqlserver one without --host is served by in-memory demo tables (development only)')
    .argument('[id]', 'a UUID, unique across the catalog (default: a new one)')
    .addOption(accountOption())
    .addOption(new Option('-t, --type <type>', 'sqlserver, postgresql, ...').makeOptionMandatory())
    .option('--host <host>', 'sqlserver: the database server')
    .addOption(new Option('--port <port>', 'sqlserver: its TCP port').argParser(port).default(1433))
    .option('--database <name>', 'sqlserver: the database')
    .option('--user <name>', 'sqlserver: the user')
    .option('--password-env <variable>', 'sqlserver: the environment variable that holds the password (the password is never stored)')
    .option('--no-encrypt', 'sqlserver: do not encrypt the connection (TLS is on by default)')
    .option('--trust-server-certificate', "sqlserver: accept the server's certificate unverified", false)
    .action(
      async (
        id: string | undefined,
        options: {
          account: string;
          type: string;
          host?: string;
          port: number;
          database?: string;
          user?: string;
          passwordEnv?: string;
          encrypt: boolean;
          trustServerCertificate: boolean;
        },
        command: Command,
      ) => {
        const { host, database, user, passwordEnv } = options;
        const details = { '--host': host, '--database': database, '--user': user, '--password-env': passwordEnv };
        const given = Object.entries(details).filter(([, v]) => v !== undefined);
        if (given.length > 0 && options.type !== 'sqlserver') throw new UsageError(`${given[0]![0]} is for --type sqlserver only`);
        if (given.length > 0 && given.length < 4) {
          const missing = Object.entries(details).find(([, v]) => v === undefined)![0];
          throw new UsageError(`a sqlserver database needs --host, --database, --user and --password-env (missing ${missing})`);
        }
        await withCatalog(command, async (catalog) => {
          const connectionId = id ?? randomUUID();
          await catalog.addConnection({
            id: connectionId,
            accountId: options.account,
            type: options.type,
            ...(host === undefined || database === undefined || user === undefined || passwordEnv === undefined
              ? {}
              : { sqlserver: { host, port: options.port, database, user, passwordEnv, encrypt: options.encrypt, trustServerCertificate: options.trustServerCertificate } }),
          });
          print(`connection "${connectionId}" (${options.type}) added to account "${options.account}" in ${catalog.description}`);
        });
      },
    );
  connections
    .command('list')
    .description('lists the connections (with the name of the variable that holds a password, never a password)')
    .addOption(accountFilter())
    .addOption(outputOption())
    .action(async (options: { account?: string; output: string }, command: Command) => {
      await withCatalog(command, async (catalog) => {
        const found = await catalog.listConnections(options.account);
        list(
          options.output,
          found.map((k) => ({
            id: k.id,
            account_id: k.accountId,
            type: k.type,
            sqlserver:
              k.sqlserver === undefined
                ? null
                : {
                    host: k.sqlserver.host,
                    port: k.sqlserver.port,
                    database: k.sqlserver.database,
                    user: k.sqlserver.user,
                    password_env: k.sqlserver.passwordEnv,
                    encrypt: k.sqlserver.encrypt,
                    trust_server_certificate: k.sqlserver.trustServerCertificate,
                  },
          })),
          ['ID', 'ACCOUNT', 'TYPE', 'DATABASE'],
          found.map((k) => [k.id, k.accountId, k.type, k.sqlserver === undefined ? '-' : `${k.sqlserver.host}:${k.sqlserver.port}/${k.sqlserver.database}`]),
        );
      });
    });
  connections
    .command('remove')
    .description('removes a connection')
    .argument('<id>', "the connection's id")
    .action(async (id: string, _options: object, command: Command) => {
      await withCatalog(command, async (catalog) => {
        const removed = await catalog.removeConnection(id);
        print(`connection "${removed.id}" removed from account "${removed.accountId}" in ${catalog.description}`);
      });
    });

  const endpoints = program
    .command('webhook-endpoints')
    .description('webhook endpoints of an account, where its run events are POSTed (PostgreSQL catalog): add, list, remove');
  endpoints
    .command('add')
    .description('adds a webhook endpoint; without --secret-env a signing secret is made, printed once and stored encrypted (needs SVC_CATALOG_KEY)')
    .argument('<account>', 'the account whose run events it receives')
    .option('--id <id>', 'its id, unique across the catalog (default: whep_ and random characters)')
    .addOption(new Option('--url <url>', 'the http: or https: URL the deliveries are POSTed to').makeOptionMandatory())
    .option('--secret-env <variable>', 'the environment variable of the servers and workers that holds the signing secret (whsec_…); it is never stored')
    .addOption(new Option('--event <type>', `an event type it receives (${RUN_EVENT_TYPES.join(', ')}); repeat for more (default: the final ones)`).argParser(eventType))
    .action(async (account: string, options: { id?: string; url: string; secretEnv?: string; event?: string[] }, command: Command) => {
      await withCatalog(command, async (catalog) => {
        const id = options.id ?? `whep_${randomBytes(12).toString('base64url')}`;
        // 32 random bytes: within Standard Webhooks' recommended 24..64.
        const made = options.secretEnv === undefined ? `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}` : undefined;
        await catalog.addWebhookEndpoint({
          id,
          accountId: account,
          url: options.url,
          secret: made === undefined ? { env: options.secretEnv as string } : { value: made },
          ...(options.event === undefined ? {} : { events: options.event }),
        });
        const done = `webhook endpoint "${id}" added to account "${account}" in ${catalog.description}`;
        print(
          made === undefined
            ? `${done}; its signing secret is read from ${options.secretEnv as string} by the servers and workers`
            : `${done}; its signing secret is stored encrypted.\nIts signing secret, shown this once (give it to the receiver):\n${made}`,
        );
      });
    });
  endpoints
    .command('list')
    .description('lists the webhook endpoints (where each secret is, never a secret)')
    .argument('[account]', 'only this account')
    .addOption(outputOption())
    .action(async (account: string | undefined, options: { output: string }, command: Command) => {
      await withCatalog(command, async (catalog) => {
        const found = await catalog.listWebhookEndpoints(account);
        const secretOf = (w: (typeof found)[number]): string => (w.secretEnv === undefined ? 'encrypted' : `env:${w.secretEnv}`);
        list(
          options.output,
          found.map((w) => ({ id: w.id, account_id: w.accountId, url: w.url, events: w.events, secret: secretOf(w) })),
          ['ID', 'ACCOUNT', 'URL', 'EVENTS', 'SECRET'],
          found.map((w) => [w.id, w.accountId, w.url, w.events.join(','), secretOf(w)]),
        );
      });
    });
  endpoints
    .command('remove')
    .description('removes a webhook endpoint: no more deliveries go to it')
    .argument('<id>', "the endpoint's id")
    .action(async (id: string, _options: object, command: Command) => {
      await withCatalog(command, async (catalog) => {
        const removed = await catalog.removeWebhookEndpoint(id);
        print(`webhook endpoint "${id}" removed from account "${removed.accountId}" in ${catalog.description}`);
      });
    });

  program
    .command('config')
    .description('the configuration file: validate')
    .command('validate')
    .description('validates the configuration as the server does at start, naming every bad field')
    .action(async (_options: object, command: Command) => {
      await withCatalog(command, async (catalog) => {
        const s = await catalog.validate();
        print(
          `${catalog.description} is valid: ${s.accounts} accounts, ${s.apiKeys} API keys, ${s.oauthTokens} OAuth tokens, ${s.agents} agents, ${s.connections} connections`,
        );
      });
    });

  program
    .command('migrate')
    .description("brings the catalog's database schema up to date (a YAML catalog has none)")
    .action(async (_options: object, command: Command) => {
      await withCatalog(command, async (catalog) => {
        const { applied } = await catalog.migrate();
        print(applied.length === 0 ? `nothing to migrate: the catalog is ${catalog.description}` : `applied ${applied.length} migrations: ${applied.join(', ')}`);
      });
    });

  // Each command's failures name it: `svc-server keys create: unknown option '--kind'`.
  const everyCommand = (command: Command): Command[] => [command, ...command.commands.flatMap(everyCommand)];
  for (const command of everyCommand(program)) {
    command.exitOverride((failure) => {
      throw new ParseFailure(command, failure);
    });
  }
  return program;
}
