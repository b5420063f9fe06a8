import type { Server } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@svc/core';
import { RUN_WORKER_STOP_SLACK_MS, within } from '@svc/adapter-queue/memory';
import type { ShutdownSettings } from './settings.js';

/**
 * What a stop left undone (docs/CONTRACT.md "Dependencies and faults": exit 0 when drained,
 * otherwise non-zero and one log line naming what was abandoned).
 */
export interface StopReport {
  /** Requests still unanswered when `shutdown_grace_ms` ended: their connections were cut. */
  readonly requestsCut: number;
  /**
   * Runs (ids) in progress when the grace ended, in a durable queue (BullMQ): their jobs
   * stay active until the lock expires; then the stalled check of a live worker queues
   * them again.
   */
  readonly runsAbandoned: readonly string[];
  /**
   * Runs (ids) that live in this process (in memory) and will not be run: in progress when
   * the grace ended, waiting for their next attempt, or still queued. Lost with the process.
   */
  readonly runsLost: readonly string[];
  /** Close steps that did not finish within their bound (or failed), and dropped clients. */
  readonly closeStepsUnfinished: readonly string[];
}

/** True when the stop left nothing undone: the process may exit 0. */
export function drained(report: StopReport): boolean {
  return report.requestsCut === 0 && report.runsAbandoned.length === 0 && report.runsLost.length === 0 && report.closeStepsUnfinished.length === 0;
}

/** The one log line's message of a stop that abandoned something, naming each thing. */
export function abandonedMessage(report: StopReport): string {
  const parts: string[] = [];
  if (report.requestsCut > 0) parts.push(`${report.requestsCut} request(s) still open were cut`);
  if (report.runsAbandoned.length > 0) {
    parts.push(`${report.runsAbandoned.length} run(s) in progress abandoned (they stay queued: another worker picks them up once their lock expires)`);
  }
  if (report.runsLost.length > 0) parts.push(`${report.runsLost.length} in-memory run(s) not finished, lost with the process`);
  if (report.closeStepsUnfinished.length > 0) parts.push(`close did not finish: ${report.closeStepsUnfinished.join(', ')}`);
  return `stopped, abandoning: ${parts.join('; ')}`;
}

/**
 * Most run ids one stop line names per kind (the counts are always exact): enough for
 * any realistic stop, while a line stays below ~40 KB when thousands of in-memory runs
 * are lost at once.
 */
export const MAX_RUN_IDS_NAMED = 1_000;

/**
 * The bound of a stop in ms from the signal (docs/CONTRACT.md "Dependencies and faults"):
 * `shutdown_delay_ms` (unless `withDelay` is false: a standalone worker serves no load
 * balancer) + `shutdown_grace_ms` + the worker's stop slack (`RUN_WORKER_STOP_SLACK_MS`,
 * 250 ms) + `shutdown_close_budget_ms`.
 */
export function stopBoundMs(shutdown: ShutdownSettings, withDelay = true): number {
  return (withDelay ? shutdown.delayMs : 0) + shutdown.graceMs + RUN_WORKER_STOP_SLACK_MS + shutdown.closeBudgetMs;
}

/**
 * Runs named close steps at the same time, each bounded by `budgetMs` (no bound when it
 * is not finite). A step may resolve with notes on what it did not close cleanly (e.g. a
 * Redis client dropped).
 * @returns one entry per step that did not finish in time or failed, and per note.
 */
export async function closeSteps(steps: Readonly<Record<string, () => Promise<readonly string[] | void>>>, budgetMs: number): Promise<string[]> {
  const results = await Promise.all(
    Object.entries(steps).map(async ([name, step]): Promise<string[]> => {
      const result = await within(Promise.resolve().then(step), budgetMs);
      if (result.outcome !== 'done') return [`${name} (${result.outcome === 'timeout' ? 'timed out' : 'failed'})`];
      return (result.value ?? []).map((note) => `${name}: ${note}`);
    }),
  );
  return results.flat();
}

/** Notes of {@link closeSteps} for the Redis clients a run backend dropped. */
export function droppedClientNotes(droppedClients: readonly string[] | undefined): string[] {
  return (droppedClients ?? []).map((role) => `Redis client ${role} dropped (QUIT not answered)`);
}

/**
 * Ms a connection may stay idle during the drain before it is closed. Closing an idle
 * keep-alive socket races with a client that writes its next request on it at the same
 * moment: that request is lost (the client sees a reset) — the race Node's own
 * `server.close()` (which closes idle sockets at once since Node 19), http-terminator and
 * stoppable all run at the signal, and which gave ECONNRESET 2–10 ms after SIGTERM under
 * load. A busy client sends its next request within milliseconds, gets it answered with
 * `Connection: close`, and the server closes after that answer: no race. Only a socket idle
 * this long is closed by the server, when its client is not under load; that is the same
 * race the keep-alive timeout (5 s, announced as `Keep-Alive: timeout=5`) has in steady
 * state, and clients guard it the same way.
 */
export const DRAIN_IDLE_CLOSE_MS = 1_000;

/** One open connection of an {@link HttpDrain}. */
interface ConnectionState {
  /** Responses not finished yet: the requests in flight on it. */
  readonly open: Set<ServerResponse>;
  /** Closes it once it has been idle {@link DRAIN_IDLE_CLOSE_MS} during the drain. */
  idleTimer?: NodeJS.Timeout;
}

/**
 * The drain of one HTTP listener (docs/CONTRACT.md "Dependencies and faults": stop accepting,
 * answer what was received, with `Connection: close` on kept-alive connections).
 *
 * Written here rather than taken from a library because the libraries that fit
 * (http-terminator, stoppable, Node's `server.close()` / `closeIdleConnections()`,
 * Fastify's `forceCloseConnections: 'idle'`) all close idle keep-alive sockets at the
 * signal, which resets requests sent at that moment (see {@link DRAIN_IDLE_CLOSE_MS}),
 * and Fastify's `return503OnClosing` refuses them instead of answering them.
 */
export class HttpDrain {
  /** Each open connection and the responses it has not finished. */
  private readonly connections = new Map<Socket, ConnectionState>();
  private closeAfterResponse = false;
  private draining = false;
  /**
   * The `close` listener of every response, made once: `this` is the response. A listener
   * made per request (and `once`'s wrapper of it) cost each request ~270 bytes of heap.
   */
  private readonly responseClosed: (this: ServerResponse) => void;

  /** Tracks the connections of `server`; call before it listens. */
  constructor(private readonly server: Server) {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the listener's own `this` is the response
    const drain = this;
    this.responseClosed = function (this: ServerResponse) {
      const socket = this.req.socket;
      drain.connections.get(socket)?.open.delete(this);
      if (drain.draining) drain.closeWhenIdle(socket);
    };
    server.on('connection', (socket: Socket) => {
      const state: ConnectionState = { open: new Set() };
      this.connections.set(socket, state);
      socket.once('close', () => {
        clearTimeout(state.idleTimer);
        this.connections.delete(socket);
      });
      if (this.draining) this.closeWhenIdle(socket);
    });
  }

  /** Call first for every request: counts it, and asks for `Connection: close` once stopping. */
  onRequest(req: IncomingMessage, res: ServerResponse): void {
    const state = this.connections.get(req.socket);
    if (this.closeAfterResponse) res.setHeader('Connection', 'close');
    if (state === undefined) return;
    clearTimeout(state.idleTimer);
    state.open.add(res);
    // `close` comes once a response; `on` spares `once`'s wrapper.
    res.on('close', this.responseClosed);
  }

  /**
   * From now on every answer carries `Connection: close` (the client opens a new
   * connection for its next request: to this server during `shutdown_delay_ms`, to
   * another one after). Answers already being written are not changed.
   */
  announceClose(): void {
    this.closeAfterResponse = true;
    for (const { open } of this.connections.values()) {
      for (const res of open) if (!res.headersSent) res.setHeader('Connection', 'close');
    }
  }

  /**
   * Stops accepting, answers every request already received or arriving on an open
   * connection, closes connections idle for {@link DRAIN_IDLE_CLOSE_MS}, and after
   * `graceMs` cuts whatever is still open.
   * @returns how many requests were still unanswered when they were cut.
   */
  async drain(graceMs: number): Promise<number> {
    this.announceClose();
    this.draining = true;
    const allClosed = new Promise<void>((resolve) => {
      // net.Server's close, not http.Server's: since Node 19 the latter also closes idle
      // keep-alive sockets at once, which is the race described at DRAIN_IDLE_CLOSE_MS.
      // It stops accepting now and calls back when the last connection has closed.
      NetServer.prototype.close.call(this.server, () => resolve());
    });
    for (const socket of this.connections.keys()) this.closeWhenIdle(socket);
    const result = await within(allClosed, graceMs);
    let cut = 0;
    if (result.outcome !== 'done') {
      for (const [socket, { open }] of this.connections) {
        cut += open.size;
        socket.destroy();
      }
      await allClosed;
    }
    // Clears http.Server's connection-checking timer; no connection is left to close.
    this.server.close();
    return cut;
  }

  private closeWhenIdle(socket: Socket): void {
    const state = this.connections.get(socket);
    if (state === undefined || state.open.size > 0 || socket.destroyed) return;
    clearTimeout(state.idleTimer);
    state.idleTimer = setTimeout(() => {
      if (state.open.size === 0) socket.destroy();
    }, DRAIN_IDLE_CLOSE_MS);
  }
}

/**
 * Ms the process waits past its stop bound ({@link stopBoundMs}) before it exits anyway: every phase of `stop()` has its own
 * deadline, so this fires only should one of them be missed (a bug); it keeps the
 * promise of a bounded stop even then.
 */
const STOP_GUARD_MARGIN_MS = 1_000;

/**
 * Exits once `stopping` settles: 0 after the "stopped" line when everything drained,
 * otherwise 1 after ONE error line naming what was abandoned (docs/CONTRACT.md "Dependencies
 * and faults"). A guard exits 1 should the stop overrun `boundMs`.
 */
export function exitAfterStop(logger: Logger, stopping: Promise<StopReport>, boundMs: number): void {
  let exiting = false;
  const exit = (code: number, log: () => void): void => {
    if (exiting) return;
    exiting = true;
    log();
    process.exit(code);
  };
  // Not unref'd: should `stopping` never settle while no other handle is left, an
  // unref'd guard would let Node exit 0 without the line.
  setTimeout(
    () => exit(1, () => logger.error({ bound_ms: boundMs }, `stopped, abandoning: the stop overran its bound of ${boundMs} ms`)),
    boundMs + STOP_GUARD_MARGIN_MS,
  );
  stopping.then(
    (report) => {
      if (drained(report)) exit(0, () => logger.info({}, 'stopped'));
      else {
        exit(1, () =>
          logger.error(
            {
              requests_cut: report.requestsCut,
              runs_abandoned: report.runsAbandoned.length,
              run_ids: report.runsAbandoned.slice(0, MAX_RUN_IDS_NAMED),
              runs_lost: report.runsLost.length,
              lost_run_ids: report.runsLost.slice(0, MAX_RUN_IDS_NAMED),
              close_steps_unfinished: report.closeStepsUnfinished,
            },
            abandonedMessage(report),
          ),
        );
      }
    },
    (error: unknown) => exit(1, () => logger.error({ error_type: (error as Error)?.name }, 'stop failed')),
  );
}

