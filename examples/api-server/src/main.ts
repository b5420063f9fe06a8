/**
 * The API server: `node examples/api-server/dist/main.js [--config FILE]`, `pnpm start
 * --config FILE`, `pnpm start -- --config FILE` (or `SVC_CONFIG=FILE`). Without a
 * configuration it serves a development account whose fresh secrets it prints once.
 * SIGHUP, and any change of the configuration file, reload its accounts, keys, tokens,
 * agents and connections while serving (docs/decisions.md "Configuration reload").
 * SIGTERM / SIGINT drain and stop within `stopBoundMs` (`shutdown_delay_ms +
 * shutdown_grace_ms` + 250 ms + `shutdown_close_budget_ms`): exit 0 when everything
 * drained, 1 with one log line naming what was abandoned.
 *
 * This entry only holds V8's young generation at its initial size (./young-generation.ts)
 * before anything else is loaded: the server's ~830 files are loaded, linked and evaluated
 * by the dynamic import below, which a static import would have done before this module's
 * first line ran.
 */
import './young-generation.js';

await import('./run-server.js');
