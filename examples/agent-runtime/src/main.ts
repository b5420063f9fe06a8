// The API server with your own agent runtime plugged in (README "Plug in your agent runtime").
// Run it from the repository root: pnpm build && node examples/agent-runtime/dist/main.js
import { devAccount, loadSettings, startServer } from '@svc/api-server';
import { RunFailedError, type RunProcessor } from '@svc/core';

/** Your agent runtime: called once per attempt of every run the API accepted. */
const processor: RunProcessor = {
  async process(run, { signal, attempt, reportProgress }) {
    const files = run.request.kind === 'files' ? run.request.files : [];
    await reportProgress({ percent: 0, message: `Attempt ${attempt}: reading ${files.length} file(s)` });
    for (const [i, file] of files.entries()) {
      signal.throwIfAborted(); // the server is stopping (or the run was cancelled)
      // An answer, not an accident: fails the run at once, with this reason shown to the client.
      if (file.content_type !== 'application/pdf') throw new RunFailedError(`${file.file_name} is not a PDF.`);
      // ... hand the file to your agent here; any other error thrown is retried with backoff ...
      await reportProgress({ percent: Math.round((100 * (i + 1)) / files.length), message: `Read ${file.file_name}` });
    }
    // Stored with the run and shown at GET /api/v1/runs/{run_id} as `output`.
    return { ok: true, output: { files_read: files.length, answer: `You asked: ${run.request.message ?? '(nothing)'}` } };
  },
};

// SVC_CONFIG names a configuration file; without one, a development account with fresh secrets.
const configured = loadSettings(process.env['SVC_CONFIG'] || undefined);
const dev = configured.accounts.length === 0 ? devAccount() : undefined;
const settings = dev === undefined ? configured : { ...configured, accounts: [dev.account] };
const server = await startServer(settings, { processor });
process.stdout.write(`svc API with your agent runtime on ${settings.baseUrl}\n`);
if (dev !== undefined) process.stdout.write(`  export SVC_API_KEY=${dev.apiKey}\n`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void server.stop().then(() => process.exit(0)));
