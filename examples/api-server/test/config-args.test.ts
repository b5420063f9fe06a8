// Issue 13: every way the README and the issue name to hand the server its configuration
// works as written, pnpm 12's literal `--` included (docs/NOTES-dependencies.md).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { stringify } from 'yaml';
import { eventually } from '@svc/core/testing';
import { call } from '../../../tools/test-support/http.js';
import { closeConnections, ownConnections } from '../../../tools/test-support/http-connections.js';
import { buildApiServer, MAIN_DIST, signalGroup, spawnChild } from './support/built-server.js';
import { logLines, tempDir, type Child } from './support/server-process.js';

interface Form {
  /** As a user types it. */
  readonly shown: string;
  readonly command: string;
  readonly args: (config: string) => string[];
  readonly env?: (config: string) => NodeJS.ProcessEnv;
}

const FORMS: readonly Form[] = [
  { shown: 'pnpm start --config x', command: 'pnpm', args: (c) => ['start', '--config', c] },
  { shown: 'pnpm start -- --config x', command: 'pnpm', args: (c) => ['start', '--', '--config', c] },
  { shown: 'pnpm run start --config x', command: 'pnpm', args: (c) => ['run', 'start', '--config', c] },
  { shown: 'SVC_CONFIG=x pnpm start', command: 'pnpm', args: () => ['start'], env: (c) => ({ SVC_CONFIG: c }) },
  { shown: `node ${MAIN_DIST} --config x`, command: process.execPath, args: (c) => [MAIN_DIST, '--config', c] },
  { shown: `node ${MAIN_DIST} -- --config x`, command: process.execPath, args: (c) => [MAIN_DIST, '--', '--config', c] },
  { shown: `SVC_CONFIG=x node ${MAIN_DIST}`, command: process.execPath, args: () => [MAIN_DIST], env: (c) => ({ SVC_CONFIG: c }) },
];

describe('examples/api-server: --config argument forms (built server and pnpm start, child processes)', function () {
  this.timeout(120_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  const children: Child[] = [];

  before(async function () {
    await buildApiServer();
    dir = await tempDir();
  });
  after(async function () {
    for (const child of children) if (signalGroup(child, 0)) signalGroup(child, 'SIGKILL');
    await dir?.remove();
  });

  it('each form starts the server on the file it names (ports 0, read from the "listening" line), and SIGTERM stops it', async function () {
    // Every form at once: each pays pnpm's and tsc -b's start-up, which adds up in a row.
    const results = await Promise.all(
      FORMS.map(async (form, i) => {
        const name = `config form ${i}: ${form.shown}`;
        const config = join(dir.path, `form-${i}.yaml`);
        await writeFile(
          config,
          stringify({
            base_url: 'http://127.0.0.1:1',
            listen: { host: '127.0.0.1', port: 0 },
            egress: { url: 'http://127.0.0.1:2', listen: { host: '127.0.0.1', port: 0 } },
            // Seven servers at once: none may take the default admin port 9464.
            admin_listen: { port: 0 },
            worker: { enabled: false },
            index: { name },
            shutdown_grace_ms: 2_000,
          }),
        );
        const child = spawnChild(form.command, form.args(config), { env: form.env?.(config) ?? {}, detached: true });
        children.push(child);
        const listening = () => logLines(child).find((l) => l['msg'] === 'listening');
        await eventually(() => child.hasExited() || listening() !== undefined, `${form.shown} to listen`, 60_000, 20);
        expect(listening(), `${form.shown}\n${child.stdout()}\n${child.stderr()}`).to.not.equal(undefined);
        const port = listening()!['port'] as number;
        expect(port).to.be.above(0);
        const base = `http://127.0.0.1:${port}`;
        ownConnections(base);
        const index = await call(base, 'GET', '/api/v1');
        expect((index.body as { name?: string }).name, `${form.shown} read its file`).to.equal(name);
        // The kept-alive connection closed first: the drain would wait 1 s for it.
        await closeConnections(base);
        // The process group: pnpm, its shell and node alike.
        signalGroup(child, 'SIGTERM');
        await eventually(() => !signalGroup(child, 0), `${form.shown} to stop`, 30_000, 20);
        expect(logLines(child).some((l) => l['msg'] === 'stopped'), `${form.shown} stopped cleanly\n${child.stdout()}`).to.equal(true);
        return `${form.shown}: port ${port}`;
      }),
    );
    console.log(`      figures: ${results.join('; ')}`);
  });
});
