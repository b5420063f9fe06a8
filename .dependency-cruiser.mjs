// The house has no import cycle: `pnpm lint` and `pnpm test` run this over every
// TypeScript file of the workspace (tools/test/dependency-rules.test.ts proves it fails on
// one). dependency-cruiser rather than ESLint's import-x/no-cycle because that rule skips
// type-only imports, and both cycles this repository had were type-only (`import type`
// both ways round a module pair): harmless at run time, but still two modules that cannot
// be understood, moved or split apart one without the other. dependency-cruiser 17 is the
// last major that runs on Node 20 (18 requires Node 22).

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle, type-only imports included: move what both modules need into a third one that imports neither.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // Count `import type` too (off by default: dependency-cruiser otherwise sees the
    // emitted JavaScript's imports only).
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    // The fixtures hold a deliberate cycle; the dependency-rules test cruises them itself.
    exclude: { path: ['(^|/)dist/', '(^|/)node_modules/', '^tools/test/fixtures/'] },
    // A workspace package resolves to its src/ through the `source` condition, as the tests
    // run it, so a cycle through another package is seen in source, not in dist/.
    enhancedResolveOptions: {
      conditionNames: ['source', 'types', 'import', 'node', 'default'],
      exportsFields: ['exports'],
      extensions: ['.ts', '.d.ts', '.js'],
    },
  },
};
