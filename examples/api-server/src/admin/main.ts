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
import { CatalogAdminError, type CatalogAdmin } from './catalog-admin.js';
import { PROGRAM_NAME, runAdmin } from './program.js';

/**
 * The catalog a configuration file selects: a PostgreSQL catalog when the file has
 * `catalog.postgres` (README "A catalog for several instances (PostgreSQL)"), else the YAML
 * file itself. Each implementation is loaded only when selected (the PostgreSQL one brings
 * knex and pg), and only when a command runs: `--help` and usage errors skip compiling the
 * configuration's schema. A file that cannot be read or parsed goes to the YAML
 * implementation, which reports it as it always has.
 */
async function openCatalog(configPath: string): Promise<CatalogAdmin> {
  let raw: unknown;
  try {
    const [{ readFile }, { parse }] = await Promise.all([import('node:fs/promises'), import('yaml')]);
    raw = parse(await readFile(configPath, 'utf8'));
  } catch {
    raw = undefined;
  }
  if ((raw as { catalog?: { postgres?: unknown } } | null)?.catalog?.postgres !== undefined) {
    const [{ loadSettings }, { PostgresCatalogAdmin }] = await Promise.all([import('../settings.js'), import('./postgres-catalog-admin.js')]);
    let postgres;
    try {
      postgres = loadSettings(configPath).catalog?.postgres;
    } catch (error) {
      throw new CatalogAdminError('invalid', (error as Error).message);
    }
    if (postgres !== undefined) return new PostgresCatalogAdmin(postgres);
  }
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
