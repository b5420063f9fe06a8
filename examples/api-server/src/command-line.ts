/**
 * The command-line arguments of a server script without a leading `--`. pnpm 12 appends
 * everything after the script name to the script, `--` included: `pnpm start -- --config
 * x` runs `node …/main.js -- --config x` (docs/NOTES-dependencies.md), and `util.parseArgs`
 * takes whatever follows `--` for positionals and refuses them ("Unexpected argument").
 * Only a first `--` is dropped; `--` elsewhere keeps its meaning.
 * @param argv - `process.argv.slice(2)`.
 */
export function scriptArgs(argv: readonly string[]): string[] {
  return argv[0] === '--' ? argv.slice(1) : [...argv];
}
