import { expect } from 'chai';
import { ESLint } from 'eslint';

// Proves the dependency rules of ARCHITECTURE.md are enforced, not just configured: the
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

  it('passes when an adapter imports the core', async function () {
    const ids = await ruleIdsFor('packages/adapter-http/src/ok.ts', `import { ok } from '@svc/core';\nexport const y = ok;\n`);
    expect(ids).to.not.include('no-restricted-imports');
  });
});
