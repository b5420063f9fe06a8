// The API server as an operator runs it: the built dist/main.js (or `pnpm start`), as a
// child process, and a keep-alive HTTP client to load it with.
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { leakScan } from '../../../../tools/test-support/leak-scan.js';
import { REPO_ROOT, spawnChild, type Child } from './server-process.js';

export { spawnChild, type SpawnOptions } from './server-process.js';

/** The built server, relative to the repository root (what `pnpm start` runs). */
export const MAIN_DIST = 'examples/api-server/dist/main.js';

/**
 * Brings examples/api-server/dist up to date (`tsc -b`, a no-op after `pnpm test`'s own
 * build); rejects with the compiler's output when it fails or takes over `deadlineMs`.
 */
export async function buildApiServer(deadlineMs = 120_000): Promise<void> {
  const tsc = spawnChild(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'examples/api-server'], { leakScan: false });
  const timer = setTimeout(() => tsc.process.kill('SIGKILL'), deadlineMs);
  const exit = await tsc.exited;
  clearTimeout(timer);
  if (exit.code !== 0) throw new Error(`tsc -b examples/api-server failed (${JSON.stringify(exit)}):\n${tsc.stdout()}\n${tsc.stderr()}`);
}

/** Sends `signal` to the process group a detached child leads; false when the group is gone. */
export function signalGroup(child: Child, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-(child.process.pid as number), signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/** One answer of a {@link KeepAliveClient}: a status, or the error that took its place (a reset, a refused connection). */
export type Outcome = { readonly status: number; readonly body: string } | { readonly error: string };

/**
 * An HTTP client on one kept-alive connection (an `http.Agent` with one socket): its
 * requests go one after the other, so the server sees them in the order they were sent.
 * Its requests and answers go through the leak scan (tools/test-support/leak-scan.ts).
 */
export class KeepAliveClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });

  constructor(private readonly port: number) {}

  /** Sends one request (a JSON body when `json` is given) and reads its whole answer. */
  send(method: string, path: string, headers: Record<string, string>, json?: unknown): Promise<Outcome> {
    const body = json === undefined ? undefined : JSON.stringify(json);
    const all = body === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    const scanned = leakScan.capturing;
    if (scanned) leakScan.registerRequest(Object.entries(all), body);
    return new Promise((resolve) => {
      const req = request({ agent: this.agent, host: '127.0.0.1', port: this.port, method, path, headers: all }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.once('end', () => {
          if (scanned) {
            const pairs = res.rawHeaders.flatMap((h, i) => (i % 2 === 0 ? [[h, res.rawHeaders[i + 1] ?? ''] as const] : []));
            leakScan.scanResponse(`response ${method} http://127.0.0.1:${this.port}${path} ${res.statusCode ?? 0}`, { statusLine: `HTTP/${res.httpVersion} ${res.statusCode ?? 0} ${res.statusMessage ?? ''}`, headers: pairs, body: text });
          }
          resolve({ status: res.statusCode ?? 0, body: text });
        });
        res.once('error', (e: Error) => resolve({ error: `${(e as NodeJS.ErrnoException).code ?? e.name}: ${e.message}` }));
      });
      req.once('error', (e: Error) => resolve({ error: `${(e as NodeJS.ErrnoException).code ?? e.name}: ${e.message}` }));
      req.end(body);
    });
  }

  /** Closes the kept-alive socket. */
  close(): void {
    this.agent.destroy();
  }
}
