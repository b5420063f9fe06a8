import { expect } from 'chai';
import { cruise, type ICruiseOptions } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import { ESLint } from 'eslint';
import { readFile } from 'node:fs/promises';

// Proves the dependency rules of docs/ARCHITECTURE.md are enforced, not just configured: the
// lint step fails on each kind of violation, and passes on the allowed import.
describe('dependency rules (eslint)', function () {
  this.timeout(60_000);
  const eslint = new ESLint({ cwd: process.cwd() });

  async function ruleIdsFor(filePath: string, code: string): Promise<string[]> {
    const [result] = await eslint.lintText(code, { filePath });
    return (result?.messages ?? []).map((m) => m.ruleId ?? m.message);
  }

  it('fails when packages/core imports a framework', async function () {
    for (const lib of ['koa', '@koa/router', 'knex', 'tedious', 'ioredis', 'bullmq', 'rate-limiter-flexible', 'inversify']) {
      const ids = await ruleIdsFor('packages/core/src/domain/bad.ts', `import x from '${lib}';\nexport const y = x;\n`);
      expect(ids, lib).to.include('no-restricted-imports');
    }
  });

  it('fails when packages/core imports an adapter', async function () {
    const ids = await ruleIdsFor('packages/core/src/domain/bad.ts', `import { x } from '@svc/adapter-http';\nexport const y = x;\n`);
    expect(ids).to.include('no-restricted-imports');
  });

  it('fails when one adapter imports another', async function () {
    const ids = await ruleIdsFor('packages/adapter-http/src/bad.ts', `import { x } from '@svc/adapter-queue';\nexport const y = x;\n`);
    expect(ids).to.include('no-restricted-imports');
  });

  it('fails when a use case is constructed anywhere but createCore, tests and examples included', async function () {
    for (const [file, cls] of [
      ['examples/api-server/src/bad.ts', 'StartRun'],
      ['packages/adapter-http/test/bad.test.ts', 'InsertRecord'],
      ['packages/core/src/use-cases/bad.ts', 'RateLimitPolicy'],
    ] as const) {
      const ids = await ruleIdsFor(file, `import { ${cls} } from '@svc/core';\nexport const y = new ${cls}(undefined as never, undefined as never, undefined as never, undefined as never, undefined as never);\n`);
      expect(ids, `${cls} in ${file}`).to.include('no-restricted-syntax');
    }
    const ids = await ruleIdsFor('packages/core/src/core.ts', `import { StartRun } from './use-cases/start-run.js';\nexport const y = new StartRun(undefined as never, undefined as never, undefined as never, undefined as never, undefined as never);\n`);
    expect(ids, 'createCore itself constructs them').to.not.include('no-restricted-syntax');
  });

  it('passes when an adapter imports the core', async function () {
    const ids = await ruleIdsFor('packages/adapter-http/src/ok.ts', `import { ok } from '@svc/core';\nexport const y = ok;\n`);
    expect(ids).to.not.include('no-restricted-imports');
  });
});

// The house has no import cycle: the repository's own dependency-cruiser configuration,
// run on fixtures. Only `exclude` is replaced (the configuration excludes the fixtures, so
// that the repository's check passes); the rule itself is the one the lint step uses.
describe('no import cycle (dependency-cruiser)', function () {
  this.timeout(60_000);
  const CONFIG = '.dependency-cruiser.mjs';
  const FIXTURES = 'tools/test/fixtures/import-cycle';
  let options: ICruiseOptions;

  before(async function () {
    options = { ...(await extractDepcruiseOptions(`./${CONFIG}`)), exclude: { path: '(^|/)node_modules/' } };
  });

  async function violationsFor(file: string): Promise<string[]> {
    const result = await cruise([`${FIXTURES}/${file}`], options);
    if (typeof result.output === 'string') throw new Error('expected the JSON result, got a report');
    expect(result.output.modules.map((m) => m.source), 'the fixture was cruised').to.include(`${FIXTURES}/${file}`);
    return result.output.summary.violations.map((v) => v.rule.name);
  }

  it('fails on a cycle of value imports', async function () {
    expect(await violationsFor('value-a.ts')).to.include('no-circular');
  });

  it('fails on a cycle of type-only imports (the kind tools/tds-server had)', async function () {
    expect(await violationsFor('type-a.ts')).to.include('no-circular');
  });

  it('passes one-way imports', async function () {
    expect(await violationsFor('acyclic-root.ts')).to.deep.equal([]);
  });

  it('runs in `pnpm lint` and in `pnpm test`, over every workspace folder', async function () {
    const { scripts } = JSON.parse(await readFile('package.json', 'utf8')) as { scripts: Record<string, string> };
    for (const name of ['lint', 'test']) {
      expect(scripts[name], name).to.contain(`depcruise --config ${CONFIG} packages examples bench tools`);
    }
  });
});
