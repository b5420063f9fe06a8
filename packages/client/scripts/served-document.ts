/**
 * The OpenAPI document as the API server serves it, and the TypeScript types
 * openapi-typescript makes of it: used by `pnpm generate:client`
 * (`generate.ts`) and by the drift test (`test/generated-types.test.ts`).
 *
 * Why the built server and not `buildOpenApiDocument()` of `@svc/adapter-http` in-process:
 * what a customer's client must match is the document `GET /openapi.yaml` answers, after
 * the server's own settings (rate limits, body limit, deprecations) went into it; calling
 * the adapter with settings made up here would be a second composition root that can differ
 * from the real one. The server is started as `pnpm start` runs it, on free ports, with the
 * default `base_url` and `egress.url` (`http://127.0.0.1:8080`, `:8081`): the document quotes
 * the base URL in descriptions, so the generated file is the same on every machine.
 * This file lives outside `src/` so that the published client never reaches the server.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The checked-in generated file, relative to the repository root. */
export const GENERATED_FILE = 'packages/client/src/generated/api.ts';
/** The command that rewrites {@link GENERATED_FILE}; quoted by the drift test's failure. */
export const GENERATE_COMMAND = 'pnpm generate:client';
/** The built server `pnpm start` runs, relative to the repository root. */
const SERVER_MAIN = 'examples/api-server/dist/main.js';
/** The addresses `pnpm start` serves with no configuration (docs/CONTRACT.md "Addresses"). */
const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
const DEFAULT_EGRESS_URL = 'http://127.0.0.1:8081';
/**
 * How long the server may take to build (a no-op when dist/ is fresh, ~10 s from nothing
 * on this 2-core machine), to start listening (~0.3 s seen), and to stop after SIGTERM.
 */
const BUILD_TIMEOUT_MS = 180_000;
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;
/** One request for the document on loopback; it is assembled at start, so this is generous. */
const FETCH_TIMEOUT_MS = 10_000;

/** Brings `examples/api-server/dist` up to date (`tsc -b`). */
export function buildServer(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-b', 'examples/api-server'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: BUILD_TIMEOUT_MS });
  if (result.status !== 0) throw new Error(`tsc -b examples/api-server failed (${String(result.status ?? result.signal)}):\n${result.stdout}${result.stderr}`);
}

/**
 * Starts the built server (see the module comment), reads `GET /openapi.yaml` and stops it.
 *
 * @returns the YAML text exactly as served.
 * @throws when the server exits early, does not listen within 30 s, or answers other than 200.
 */
export async function fetchServedDocument(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-client-generate-'));
  try {
    const config = join(dir, 'config.yaml');
    // JSON is YAML. No accounts: the document does not depend on them.
    const settings = {
      base_url: DEFAULT_BASE_URL,
      listen: { host: '127.0.0.1', port: 0 },
      egress: { url: DEFAULT_EGRESS_URL, listen: { host: '127.0.0.1', port: 0 } },
      admin_listen: { port: 0, worker_port: 0 },
      worker: { enabled: false },
      accounts: [],
    };
    await writeFile(config, JSON.stringify(settings));
    const child = spawn(process.execPath, [SERVER_MAIN, '--config', config], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      const port = await listeningPort(child.stdout, exited, () => stderr);
      const res = await fetch(`http://127.0.0.1:${port}/openapi.yaml`, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`GET /openapi.yaml answered ${res.status}: ${text.slice(0, 500)}`);
      return text;
    } finally {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The port of the server's `listening` log line (pino JSON on stdout). */
function listeningPort(stdout: NodeJS.ReadableStream, exited: Promise<void>, stderr: () => string): Promise<number> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`the server did not listen within ${START_TIMEOUT_MS} ms\n${stderr()}`)), START_TIMEOUT_MS);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the server exited before it listened\n${stderr()}`));
    });
    stdout.setEncoding('utf8');
    stdout.on('data', (chunk: string) => {
      buffer += chunk;
      for (const line of buffer.split('\n').slice(0, -1)) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg?: unknown; port?: unknown };
        if (entry.msg === 'listening' && typeof entry.port === 'number') {
          clearTimeout(timer);
          resolve(entry.port);
        }
      }
      buffer = buffer.slice(buffer.lastIndexOf('\n') + 1);
    });
  });
}

/** The header of the generated file: where it comes from and how to remake it. */
const HEADER = [
  '/**',
  ' * Types of the Agent Runs and Connected Data API, generated by openapi-typescript from the',
  ' * OpenAPI document the API server serves (`GET /openapi.yaml` of `pnpm start`).',
  ` * Do not edit: run \`${GENERATE_COMMAND}\`. CI fails when this file differs from the`,
  ' * served document (packages/client/test/generated-types.test.ts).',
  ' */',
  '',
  '',
].join('\n');

/** The TypeScript module openapi-typescript makes of `yaml` (the text of {@link GENERATED_FILE}). */
export async function typesOf(yaml: string): Promise<string> {
  // Default options: the document's own order (a diff of the file reads like a diff of the
  // document), string unions rather than `enum`s (no runtime code in the client).
  const ast = await openapiTS(yaml, { silent: true });
  return `${HEADER}${astToString(ast)}`;
}
