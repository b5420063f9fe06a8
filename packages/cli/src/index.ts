/**
 * `@svc/cli`: `svc`, the command-line client of the Agent Runs and Connected Data API. The
 * program is the package's `bin`; this entry point gives it to other programs (and tests).
 */
export { DEFAULT_BASE_URL, EXIT_CODES, PROGRAM_NAME, exitCodeOf, runCli, type CliEnvironment } from './program.js';
export { PROFILE_ENV, profilePath, type Profile } from './profile.js';
