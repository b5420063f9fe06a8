// A minimal Server-Sent Events client for tests: fetch and a parser of the wire format
// (WHATWG HTML "Server-sent events"), enough for the run events stream (one data line).

/** One SSE event as a client parses it (WHATWG HTML "Server-sent events"), or a comment. */
export interface SseEvent {
  readonly id?: string;
  readonly event?: string;
  readonly data?: unknown;
  readonly comment?: string;
}

/** Parses complete SSE blocks of `text`; the rest (an unfinished block) is returned. */
export function parseSse(text: string): { events: SseEvent[]; rest: string } {
  const blocks = text.split('\n\n');
  const rest = blocks.pop() ?? '';
  const events = blocks.map((block) => {
    const event: Record<string, unknown> = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) event['comment'] = line.slice(1).trim();
      const [, field, value] = /^(id|event|data): ?(.*)$/u.exec(line) ?? [];
      if (field !== undefined) event[field] = field === 'data' ? JSON.parse(value as string) : value;
    }
    return event as SseEvent;
  });
  return { events, rest };
}

/** An open events stream: the events so far, and whether the server ended it. */
export interface OpenStream {
  readonly status: number;
  readonly headers: Headers;
  readonly events: SseEvent[];
  readonly ended: () => boolean;
  readonly finished: Promise<void>;
  /** Disconnects (the client goes away). */
  readonly abort: () => void;
}

/** Opens `GET base+path` as an SSE client would (fetch), collecting the events as they come. */
export async function openStream(base: string, path: string, headers: Record<string, string>): Promise<OpenStream> {
  const controller = new AbortController();
  const res = await fetch(`${base}${path}`, { headers, signal: controller.signal });
  const events: SseEvent[] = [];
  let ended = false;
  const finished = (async () => {
    if (res.body === null) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        const parsed = parseSse(buffer);
        events.push(...parsed.events);
        buffer = parsed.rest;
      }
      ended = true;
    } catch {
      // Aborted by the test.
    }
  })();
  return { status: res.status, headers: res.headers, events, ended: () => ended, finished, abort: () => controller.abort() };
}

