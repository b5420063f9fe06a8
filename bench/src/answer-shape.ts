/**
 * Whether a same-work peer answers like the project: the check the bench runs before it
 * measures a peer (a peer that answers differently would not be doing the same work).
 */
import type { HttpAnswer } from './load.js';

/**
 * Headers whose value differs from one request to the next (or with the server's port):
 * only their presence is compared. Every other header's value must be equal.
 */
export const PER_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  'date',
  'x-request-id',
  'location',
  'content-length',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
]);

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/giu;
const LOOPBACK_PORT = /\/\/127\.0\.0\.1:\d+/gu;

/**
 * A JSON value with what differs per request or per server taken out: UUIDs become
 * `<uuid>` and loopback ports `<port>` inside strings; keys, types, and every other
 * value stay.
 */
export function normalisedBody(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(UUID, '<uuid>').replace(LOOPBACK_PORT, '//127.0.0.1:<port>');
  if (Array.isArray(value)) return value.map(normalisedBody);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, normalisedBody((value as Record<string, unknown>)[k])]));
  }
  return value;
}

function parsed(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return `(not JSON) ${body.slice(0, 80)}`;
  }
}

const show = (v: unknown) => JSON.stringify(v);

/**
 * How `peer` answers differently from `project`, as readable phrases; empty when they
 * answer alike: same status, same set of header names, same value for every header not
 * in {@link PER_REQUEST_HEADERS}, and the same JSON body once normalised
 * ({@link normalisedBody}: same keys, types and values but ids and ports).
 */
export function answerDifferences(project: HttpAnswer, peer: HttpAnswer): string[] {
  const out: string[] = [];
  if (project.status !== peer.status) out.push(`status ${peer.status}, the project's ${project.status}`);
  const names = (a: HttpAnswer) => new Set(Object.keys(a.headers).map((n) => n.toLowerCase()));
  const theirs = names(peer);
  const ours = names(project);
  const missing = [...ours].filter((n) => !theirs.has(n)).sort();
  const extra = [...theirs].filter((n) => !ours.has(n)).sort();
  if (missing.length > 0) out.push(`lacks header${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
  if (extra.length > 0) out.push(`sends header${extra.length > 1 ? 's' : ''} the project does not: ${extra.join(', ')}`);
  for (const name of [...ours].filter((n) => theirs.has(n) && !PER_REQUEST_HEADERS.has(n)).sort()) {
    const a = String(project.headers[name]);
    const b = String(peer.headers[name]);
    if (a !== b) out.push(`${name}: ${show(b)}, the project's ${show(a)}`);
  }
  const a = show(normalisedBody(parsed(project.body)));
  const b = show(normalisedBody(parsed(peer.body)));
  if (a !== b) out.push(`body ${b}, the project's ${a} (ids and ports normalised)`);
  return out;
}
