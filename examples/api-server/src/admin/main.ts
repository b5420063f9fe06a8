#!/usr/bin/env node
/**
 * `svc-server`, the admin CLI (the `bin` of `@svc/api-server`):
 *
 *   svc-server keys create key_ci --account acct_ci --config config.yaml
 *   node examples/api-server/dist/admin/main.js keys list --config config.yaml
 *   pnpm admin keys list --config config.yaml          (from the repository root)
 *
 * `svc-server --help` lists the commands and the exit codes.
 */
import type { CatalogAdmin } from './catalog-admin.js';
import { PROGRAM_NAME, runAdmin } from './program.js';

/**
 * The catalog a configuration file selects: today always the file itself. A PostgreSQL
 * catalog (issue 13 part 1) will be selected here by a key of the file (`catalog.postgres_url`).
 * Each implementation is loaded only when selected (a PostgreSQL one brings knex and pg), and
 * only when a command runs: `--help` and usage errors skip compiling the configuration's schema.
 */
async function openCatalog(configPath: string): Promise<CatalogAdmin> {
  const { YamlCatalogAdmin } = await import('./yaml-catalog-admin.js');
  return new YamlCatalogAdmin(configPath);
}

// `svc-server keys list | head -1` closes stdout early: that is not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

// pnpm 12 hands `pnpm admin -- keys list` to the script as `-- keys list` (docs/NOTES-dependencies.md
// "Toolchain"); a `--` before the command means nothing else here, so it is dropped.
const argv = process.argv.slice(2);
runAdmin(argv[0] === '--' ? argv.slice(1) : argv, {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  openCatalog,
}).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    // runAdmin answers every failure itself; this is the last guard of "one line, never a stack trace".
    process.stderr.write(`${PROGRAM_NAME}: unexpected error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
