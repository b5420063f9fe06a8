// Keep-alive connections of the tests' fetch to the server processes they start. Node's
// fetch (undici) keeps a connection open for 4 s after each answer; a server told to stop
// closes an idle connection only after 1 s of its drain (examples/api-server/src/shutdown.ts
// DRAIN_IDLE_CLOSE_MS), so every stop of a server the tests had fetched from took ~1 s
// more. Fetches to an origin registered here go through a dispatcher of that origin's own
// (an undici Agent, as Node's global one), which the test closes before it signals the
// server: its idle connections close at once, its busy ones after their answer, and the
// server drains with nothing left to wait for.

/** undici's key of the global dispatcher on `globalThis`, shared by Node's fetch and the npm package. */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

/** Where the state of this module is kept on `globalThis` (one per process, even when the module is loaded twice). */
const STATE_KEY = Symbol.for('svc.test-support.httpConnections');

/** What this module needs of an undici dispatcher. */
interface Dispatcher {
  /** Refuses new requests; resolves once those in flight are answered and every connection is closed. */
  close(): Promise<void>;
}

/** The constructor of Node's own undici `Agent`. */
type AgentClass = new () => Dispatcher;

interface State {
  /** Registered origins, each to its open dispatcher (none until the first fetch to it). */
  readonly origins: Map<string, Dispatcher | undefined>;
  /** The Agent class, found once. */
  agentClass?: Promise<AgentClass>;
  /** The fetch this module wrapped, once it has. */
  inner?: typeof fetch;
}

const state: State = ((globalThis as Record<symbol, unknown>)[STATE_KEY] as State | undefined) ?? ((globalThis as Record<symbol, unknown>)[STATE_KEY] = { origins: new Map() } as State);

/**
 * The class of Node's global undici dispatcher (an `Agent`), without the npm undici package
 * (no workspace test depends on it): a fetch of a `data:` URL, which opens no connection,
 * makes Node create its global dispatcher if it had none.
 * @throws Error when the global dispatcher is no Agent (something replaced it).
 */
async function agentClass(): Promise<AgentClass> {
  state.agentClass ??= (async () => {
    await (await (state.inner ?? fetch)('data:,')).arrayBuffer();
    const global = (globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER] as { constructor: AgentClass } | undefined;
    if (global?.constructor.name !== 'Agent') throw new Error(`http-connections: Node's global fetch dispatcher is ${global?.constructor.name ?? 'missing'}, not undici's Agent`);
    return global.constructor;
  })();
  return state.agentClass;
}

/** The origin (`http://127.0.0.1:8080`) of what fetch is given, or undefined when it has none. */
function originOf(input: string | URL | Request): string | undefined {
  try {
    return new URL(input instanceof Request ? input.url : input).origin;
  } catch {
    return undefined;
  }
}

/** The dispatcher of a registered `origin`, made at its first use. */
async function dispatcherOf(origin: string): Promise<Dispatcher> {
  const Agent = await agentClass();
  let dispatcher = state.origins.get(origin);
  if (dispatcher === undefined) {
    dispatcher = new Agent();
    state.origins.set(origin, dispatcher);
  }
  return dispatcher;
}

/** Wraps the global fetch, once: a fetch to a registered origin gets that origin's dispatcher (unless it names one). */
function install(): void {
  if (state.inner !== undefined) return;
  const inner = globalThis.fetch;
  state.inner = inner;
  globalThis.fetch = async function fetchOnOwnConnections(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const origin = originOf(input);
    if (origin === undefined || !state.origins.has(origin) || (init !== undefined && 'dispatcher' in init)) return inner(input, init);
    return inner(input, { ...init, dispatcher: await dispatcherOf(origin) } as RequestInit);
  };
}

/**
 * From now on, every `fetch` to the origin of each of `urls` (`http://127.0.0.1:8080/...`
 * → `http://127.0.0.1:8080`) goes through connections of that origin's own, which
 * {@link closeConnections} closes. Wraps the global `fetch` at the first call (after the
 * leak scan's root hook has wrapped it: tools/test-support/leak-scan-hooks.ts).
 * @throws TypeError when a URL is not absolute.
 */
export function ownConnections(...urls: readonly string[]): void {
  install();
  for (const url of urls) {
    const { origin } = new URL(url);
    if (!state.origins.has(origin)) state.origins.set(origin, undefined);
  }
}

/**
 * Closes the connections fetch keeps to the origins of `urls` (registered with
 * {@link ownConnections}; others are left alone): idle ones at once, busy ones once their
 * answer is read. A later fetch to such an origin opens new ones. Call it before stopping
 * the server, and do not wait for what it returns when a request may still be in flight
 * (a stream the server ends only when it stops).
 * @returns a promise that resolves once those connections are all closed; it never rejects.
 */
export function closeConnections(...urls: readonly string[]): Promise<void> {
  const closing: Promise<void>[] = [];
  for (const url of urls) {
    const { origin } = new URL(url);
    const dispatcher = state.origins.get(origin);
    if (dispatcher === undefined) continue;
    state.origins.set(origin, undefined);
    closing.push(dispatcher.close().catch(() => undefined));
  }
  return Promise.all(closing).then(() => undefined);
}

/** True while fetch holds a dispatcher of its own for the origin of `url` (it fetched from it since the last {@link closeConnections}). */
export function hasOwnConnections(url: string): boolean {
  return state.origins.get(new URL(url).origin) !== undefined;
}
