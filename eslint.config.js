// Lint, and the dependency rules of docs/ARCHITECTURE.md as a build step: the core imports no
// framework and no adapter; an adapter imports only the core (never another adapter).
// Import cycles are refused by dependency-cruiser (.dependency-cruiser.mjs, in `pnpm lint`),
// which, unlike import-x/no-cycle, also sees cycles of type-only imports.
import tseslint from 'typescript-eslint';

const FRAMEWORKS = ['koa', '@koa/*', 'knex', 'tedious', 'ioredis', 'bullmq', 'rate-limiter-flexible', 'inversify', 'reflect-metadata', 'pino', 'yaml', 'pg', 'lru-cache', 'p-retry', 'nodemailer', 'undici', 'standardwebhooks', 'ipaddr.js'];
const ADAPTERS = ['adapter-http', 'adapter-sqlserver', 'adapter-queue', 'adapter-ratelimit', 'adapter-postgres', 'adapter-mcp', 'adapter-email', 'adapter-webhooks', 'adapter-storage'];
/** The classes only `createCore` may construct. */
const USE_CASES = ['DescribeApi', 'Authenticate', 'InsertRecord', 'UpdateRecord', 'StartRun', 'GetRun', 'FindAgent', 'RateLimitPolicy'];
const DEEP = { group: ['@svc/*/src/*', '@svc/*/dist/*'], message: 'Import a package through its public entry point, never its src/ or dist/.' };

/** The restriction for one adapter: no other adapter, no example, no deep import. */
function adapterRule(self) {
  return {
    files: [`packages/${self}/**/*.ts`],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ADAPTERS.filter((a) => a !== self).flatMap((a) => [`@svc/${a}`, `@svc/${a}/*`, `**/${a}/**`]), message: 'An adapter imports only @svc/core, never another adapter (docs/ARCHITECTURE.md).' },
          { group: ['@svc/api-server', '@svc/example-*', '**/examples/**'], message: 'Adapters never import a composition root.' },
          DEEP,
        ],
      }],
    },
  };
}

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', 'tools/test/fixtures/**'] },
  { files: ['**/*.ts'], extends: [tseslint.configs.recommended] },
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['packages/core/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: FRAMEWORKS, message: 'packages/core imports no framework (docs/ARCHITECTURE.md "Rules").' },
          { group: ['@svc/*', '**/adapter-*/**', '**/examples/**'], message: 'packages/core imports no adapter and no composition root.' },
        ],
      }],
    },
  },
  ...ADAPTERS.map(adapterRule),
  // What customers install: the typed client knows nothing of the server, and the CLI only
  // the client (issue 14; docs/decisions.md "Typed client" and "Command-line client").
  {
    files: ['packages/client/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: ['@svc/*', '**/packages/**', '**/examples/**', '**/tools/**', '**/scripts/**'], message: 'packages/client/src imports no server package, example or script: customers install it alone.' }],
      }],
    },
  },
  {
    files: ['packages/cli/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['@svc/*', '!@svc/client'], message: 'packages/cli/src imports only @svc/client of the workspace.' },
          { group: ['**/packages/**', '**/examples/**', '**/tools/**'], message: 'packages/cli/src imports only @svc/client of the workspace.' },
          DEEP,
        ],
      }],
    },
  },
  // The wiring exists once (issue 12; docs/ARCHITECTURE.md "Composition"): the use cases and
  // the rate-limit policy are constructed only by createCore, everywhere, tests included.
  {
    files: ['**/*.ts'],
    ignores: ['packages/core/src/core.ts'],
    rules: {
      'no-restricted-syntax': ['error', {
        selector: `NewExpression[callee.name=/^(${USE_CASES.join('|')})$/]`,
        message: 'Use cases are constructed only by createCore (packages/core/src/core.ts): call createCore(ports, options) and take the use case from it.',
      }],
    },
  },
);
