import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { stringify } from 'yaml';
import { sha256Hex } from '@svc/core';
import { eventually } from '@svc/core/testing';
import { ConfigReloader } from '../src/config-reloader.js';
import { scriptArgs } from '../src/command-line.js';
import { ConfigError, type ServerSettings } from '../src/settings.js';
import { tempDir } from './support/server-process.js';

interface Line {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly fields: Record<string, unknown>;
  readonly msg: string;
}

/** A logger that keeps its lines (pino's shape, with debug). */
function capturingLogger(): { lines: Line[]; debug(f: Record<string, unknown>, m: string): void; info(f: Record<string, unknown>, m: string): void; warn(f: Record<string, unknown>, m: string): void; error(f: Record<string, unknown>, m: string): void } {
  const lines: Line[] = [];
  const at = (level: Line['level']) => (fields: Record<string, unknown>, msg: string) => void lines.push({ level, fields, msg });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const config = (keyIds: string[]): Record<string, unknown> => ({
  accounts: [{ id: 'acct_w', api_keys: keyIds.map((id) => ({ id, sha256: sha256Hex(`svc-${id}-secret-0000000000000000`) })) }],
});

describe('ConfigReloader: SIGHUP and a watch of the configuration file (in process)', function () {
  this.timeout(20_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let path: string;
  let reloader: ConfigReloader | undefined;
  let applied: { settings: ServerSettings; reason: string }[];
  let log: ReturnType<typeof capturingLogger>;

  beforeEach(async function () {
    dir = await tempDir();
    path = join(dir.path, 'config.yaml');
    await writeFile(path, stringify(config(['k1'])));
    applied = [];
    log = capturingLogger();
  });
  afterEach(async function () {
    reloader?.close();
    reloader = undefined;
    await dir.remove();
  });

  const start = async (apply?: (s: ServerSettings, reason: string) => Promise<unknown>): Promise<ConfigReloader> => {
    reloader = new ConfigReloader({
      path,
      logger: log,
      apply: apply ?? (async (settings, reason) => void applied.push({ settings, reason })),
    });
    await reloader.watch();
    return reloader;
  };
  const save = async (text: string): Promise<void> => {
    await writeFile(`${path}.tmp`, text);
    await rename(`${path}.tmp`, path);
  };
  const keyIdsOf = (s: ServerSettings): string[] => s.accounts.flatMap((a) => a.apiKeys.map((k) => k.id));
  const unchangedChecks = (): number => log.lines.filter((l) => l.msg === 'configuration file unchanged: not reloaded').length;

  it('without a configuration file (development account), a reload logs that there is nothing to reload', async function () {
    reloader = new ConfigReloader({ path: undefined, logger: log, apply: async () => void applied.push({} as never) });
    await reloader.watch();
    await reloader.reload('SIGHUP');
    expect(applied).to.have.length(0);
    expect(log.lines.map((l) => [l.level, l.msg, l.fields['reason']])).to.deep.equal([['info', 'no configuration file (development account): nothing to reload', 'SIGHUP']]);
  });

  it('reload() (SIGHUP) loads and applies the file at once, even when its bytes did not change', async function () {
    await start();
    await reloader!.reload('SIGHUP');
    await reloader!.reload('SIGHUP');
    expect(applied.map((a) => [a.reason, keyIdsOf(a.settings)])).to.deep.equal([
      ['SIGHUP', ['k1']],
      ['SIGHUP', ['k1']],
    ]);
  });

  it('a save by rename over the file reloads it once; another file of the directory and a save of the same bytes reload nothing', async function () {
    await start();
    await writeFile(join(dir.path, 'unrelated.txt'), 'x');
    await eventually(() => unchangedChecks() >= 1, 'the event about another file to be checked', 5_000);
    expect(applied).to.have.length(0);

    await writeFile(join(dir.path, '.config.yaml.tmp'), stringify(config(['k1', 'k2'])));
    await rename(join(dir.path, '.config.yaml.tmp'), path);
    await eventually(() => applied.length === 1, 'the reload after the rename', 5_000);
    expect(applied[0]!.reason).to.equal('file change');
    expect(keyIdsOf(applied[0]!.settings)).to.deep.equal(['k1', 'k2']);

    const checked = unchangedChecks();
    await writeFile(`${path}.tmp`, stringify(config(['k1', 'k2'])));
    await rename(`${path}.tmp`, path);
    await eventually(() => unchangedChecks() > checked, 'the save of the same bytes to be checked', 5_000);
    expect(applied, 'the same bytes are not applied again').to.have.length(1);
  });

  it('a file replaced the way vim saves it (renamed away, then written anew) and a file written in place both reload', async function () {
    await start();
    await rename(path, `${path}~`);
    await writeFile(path, stringify(config(['k3'])));
    await eventually(() => applied.length === 1, 'the reload after the new file', 5_000);
    expect(keyIdsOf(applied.at(-1)!.settings)).to.deep.equal(['k3']);
    await writeFile(path, stringify(config(['k4'])));
    await eventually(() => applied.length === 2, 'the reload after the write in place', 5_000);
    expect(keyIdsOf(applied.at(-1)!.settings)).to.deep.equal(['k4']);
  });

  it('an invalid, unparsable or empty file keeps the running configuration and logs one line naming the field, without the file excerpt', async function () {
    await start();
    const invalid = config(['k1']);
    ((invalid['accounts'] as Record<string, unknown>[])[0]!['api_keys'] as Record<string, unknown>[])[0]!['sha256'] = 'not-a-digest';
    // Saved by rename: a write in place read half way would add a line of its own.
    await save(stringify(invalid));
    await eventually(() => log.lines.some((l) => l.level === 'error'), 'the invalid file to be logged', 5_000);
    await save('accounts:\n  - id: x\n    connections: [{id: 1, sqlserver: {host: db-secret-host.internal, user: sa\n  x: 1\n');
    await eventually(() => log.lines.filter((l) => l.level === 'error').length === 2, 'the unparsable file to be logged', 5_000);
    await writeFile(path, '');
    await eventually(() => log.lines.filter((l) => l.level === 'error').length === 3, 'the empty file to be logged', 5_000);
    await reloader!.reload('SIGHUP');

    expect(applied, 'nothing applied').to.have.length(0);
    const errors = log.lines.filter((l) => l.level === 'error');
    expect(errors.map((l) => l.fields['reason'])).to.deep.equal(['file change', 'file change', 'file change', 'SIGHUP']);
    expect(errors[0]!.msg).to.match(/^configuration not reloaded, the running one is kept: invalid configuration: accounts\[0\]\.api_keys\[0\]\.sha256: must match pattern/);
    expect(errors[1]!.msg).to.include('is not valid YAML').and.include('at line 4, column 3');
    expect(errors[1]!.msg, 'the excerpt of the file is left out').to.not.include('db-secret-host');
    expect(errors[2]!.msg).to.include('the file is empty');
    expect(errors[3]!.msg).to.include('the file is empty');
    for (const line of errors) expect(line.msg, 'one line').to.not.include('\n');
  });

  it('an apply that refuses (a ConfigError, a stopping server) is logged, never thrown; after close() nothing is applied', async function () {
    let refusals = 0;
    await start(async () => {
      refusals += 1;
      throw refusals === 1
        ? new ConfigError('invalid configuration:\n  accounts[0].connections[0].sqlserver.password_env: environment variable DB_PW is not set')
        : new Error('the server is stopping: configuration not reloaded');
    });
    await reloader!.reload('SIGHUP');
    await reloader!.reload('SIGHUP');
    reloader!.close();
    await reloader!.reload('SIGHUP');
    expect(refusals).to.equal(2);
    expect(log.lines.map((l) => [l.level, l.msg])).to.deep.equal([
      ['error', 'configuration not reloaded, the running one is kept: invalid configuration: accounts[0].connections[0].sqlserver.password_env: environment variable DB_PW is not set'],
      ['error', 'configuration not reloaded, the running one is kept: the server is stopping: configuration not reloaded'],
      ['info', 'stopping: configuration not reloaded'],
    ]);
  });
});

describe('scriptArgs: the arguments pnpm hands a script', function () {
  it('drops one leading -- (pnpm start -- --config x) and nothing else', function () {
    expect(scriptArgs(['--', '--config', 'x'])).to.deep.equal(['--config', 'x']);
    expect(scriptArgs(['--config', 'x'])).to.deep.equal(['--config', 'x']);
    expect(scriptArgs(['--config', 'x', '--', 'y'])).to.deep.equal(['--config', 'x', '--', 'y']);
    expect(scriptArgs([])).to.deep.equal([]);
  });
});
