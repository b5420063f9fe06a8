// Mocha global fixture, loaded for the whole run by `.mocharc.json` ("require"). The run
// keeps `"exit": false` so that a test leaving a socket, a timer or a child process open
// shows up; on its own, though, such a leak makes mocha wait forever after its summary (a
// CI run of this suite was lost that way: the summary printed, then nothing for 90 minutes).
// This turns the hang into a failure that names what is still open.
import { createHook } from 'node:async_hooks';
import type { Socket } from 'node:net';

/**
 * With `SVC_TRACE_OPEN_TIMERS=1`, where each timer still pending was made (timers are not
 * handles, so without this only their count is known). Off by default: a stack per timer.
 */
const timerStacks = new Map<number, { timer: { hasRef?: () => boolean }; stack: string }>();
if (process.env['SVC_TRACE_OPEN_TIMERS'] === '1') {
  createHook({
    init(id, type, _trigger, resource) {
      if (type === 'Timeout') timerStacks.set(id, { timer: resource as { hasRef?: () => boolean }, stack: new Error('timer made').stack ?? '' });
    },
    destroy(id) {
      timerStacks.delete(id);
    },
  }).enable();
}

/**
 * How long the process may take to exit by itself after the last test, in milliseconds:
 * above undici's keep-alive timeout (4 s) and ioredis/BullMQ closing their connections
 * (well under 1 s here), far below a CI run's budget.
 */
export const EXIT_GRACE_MS = 20_000;

/** One line per open handle: its kind, and the addresses or pid that tell whose it is. */
export function describeOpenHandles(): string[] {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.map((handle) => {
    const name = (handle as object).constructor?.name ?? typeof handle;
    if (name === 'Socket' || name === 'TLSSocket') {
      const socket = handle as Socket & { fd?: number; _handle?: { fd?: number } };
      if (socket === (process.stdout as unknown) || socket === (process.stderr as unknown)) return `${name} (stdio)`;
      const local = socket.localPort === undefined ? '' : ` ${socket.localAddress ?? ''}:${socket.localPort}`;
      const remote = socket.remotePort === undefined ? '' : ` -> ${socket.remoteAddress ?? ''}:${socket.remotePort}`;
      return `${name}${local}${remote}${socket.destroyed ? ' (destroyed)' : ''}`;
    }
    if (name === 'Server') {
      const address = (handle as { address(): unknown }).address();
      return `Server ${JSON.stringify(address)}`;
    }
    if (name === 'ChildProcess') {
      const child = handle as { pid?: number; spawnargs?: string[] };
      return `ChildProcess pid ${child.pid ?? '?'}: ${(child.spawnargs ?? []).join(' ').slice(0, 200)}`;
    }
    return name;
  });
}

/**
 * Mocha's global teardown: arms an unreferenced timer, which fires only when something
 * else still keeps the process alive {@link EXIT_GRACE_MS} after the run, prints what is
 * open (`process.getActiveResourcesInfo()` and each handle) and exits with status 1.
 */
export function mochaGlobalTeardown(): void {
  const timer = setTimeout(() => {
    const lines = describeOpenHandles().filter((line) => !line.endsWith('(stdio)'));
    console.error(
      `\nThe test process did not exit ${EXIT_GRACE_MS} ms after the last test: something a test opened is still open.\n` +
        `  resources: ${process.getActiveResourcesInfo().join(', ')}\n` +
        lines.map((line) => `  ${line}`).join('\n') +
        (timerStacks.size === 0
          ? '\n  (SVC_TRACE_OPEN_TIMERS=1 prints where each pending timer was made)'
          : [...timerStacks.values()]
              .filter(({ timer }) => timer.hasRef?.() !== false)
              .map(({ stack }) => `\n  timer${stack.split('\n').filter((frame) => frame.includes('    at ') && !frame.includes('node:') && !frame.includes('exit-guard')).slice(0, 6).join('\n  ')}`)
              .join('\n')),
    );
    // mocha's own 'exit' listener sets the exit code to the number of failures (0 here);
    // this one, added after it, runs after it.
    process.on('exit', () => {
      process.exitCode = 1;
    });
    process.exit(1);
  }, EXIT_GRACE_MS);
  timer.unref();
}
