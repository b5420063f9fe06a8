// The isolation suite's machinery (docs/CONTRACT.md "Isolation between accounts"): the
// operations read from the served OpenAPI document, the check that every one has a probe,
// and what of two answers must be equal for them to be indistinguishable.
import type { Answer } from '../../../../tools/test-support/http.js';

/** HTTP methods an OpenAPI path item can hold (OpenAPI 3.1 §4.8.9). */
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** One operation of the served OpenAPI document, where it is served. */
export interface DocumentedOperation {
  readonly operationId: string;
  /** Upper case, e.g. `POST`. */
  readonly method: string;
  /** The path template, e.g. `/api/v1/runs/{run_id}`. */
  readonly path: string;
  /** The operation's server URL: its own `servers`, its path item's, or the document's first. */
  readonly serverUrl: string;
  /** Names of its path parameters, in the order the template has them. */
  readonly pathParameters: readonly string[];
}

type Json = Record<string, unknown>;

function firstServer(servers: unknown): string | undefined {
  return Array.isArray(servers) && servers.length > 0 ? String((servers[0] as Json)['url']) : undefined;
}

/**
 * Every operation of an OpenAPI 3.1 document (`paths` only; webhooks are not requests the
 * server answers). Throws when an operation has no `operationId`: the probes are keyed by it.
 */
export function documentedOperations(document: Json): DocumentedOperation[] {
  const root = firstServer(document['servers']) ?? '/';
  const operations: DocumentedOperation[] = [];
  for (const [path, item] of Object.entries((document['paths'] ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (operation === undefined) continue;
      const operationId = operation['operationId'];
      if (typeof operationId !== 'string') throw new Error(`${method.toUpperCase()} ${path} has no operationId`);
      operations.push({
        operationId,
        method: method.toUpperCase(),
        path,
        serverUrl: firstServer(operation['servers']) ?? firstServer(item['servers']) ?? root,
        pathParameters: [...path.matchAll(/\{([^}]+)\}/gu)].map((m) => m[1] as string),
      });
    }
  }
  return operations;
}

/** What {@link probeCoverage} found: operations without a probe, and probes of no operation. */
export interface ProbeCoverage {
  readonly unprobed: readonly string[];
  readonly stale: readonly string[];
}

/**
 * Compares the documented operations with the probes written for them: an operation without
 * a probe is a hole in the isolation suite; a probe without an operation is a renamed or
 * removed operation whose new form has no probe yet.
 */
export function probeCoverage(operations: readonly DocumentedOperation[], probed: Iterable<string>): ProbeCoverage {
  const documented = new Set(operations.map((o) => o.operationId));
  const probes = new Set(probed);
  return { unprobed: [...documented].filter((id) => !probes.has(id)), stale: [...probes].filter((id) => !documented.has(id)) };
}

/**
 * Headers that differ between any two answers and say nothing about the resource: the
 * request id, the date, and the rate-limit counters (the limit itself is compared: a
 * foreign agent must not be charged to another window than a missing one).
 */
export const UNCOMPARED_HEADERS: ReadonlySet<string> = new Set([
  'x-request-id',
  'date',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
]);

/** The part of an answer that two indistinguishable answers share. */
export interface Comparable {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The body text with `id` replaced by `<id>` and `request_id` removed when it is JSON. */
  readonly body: unknown;
}

/**
 * What must be equal between the answer to a request naming another account's resource and
 * the answer to one naming a missing resource of the same shape: the status, every header
 * but {@link UNCOMPARED_HEADERS} (`Content-Length` included), and the body, once the id the
 * caller sent is replaced by `<id>` (the detail may echo it) and `request_id` is dropped.
 */
export function comparable(answer: Answer, id: string): Comparable {
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    if (!UNCOMPARED_HEADERS.has(name)) headers[name] = value.split(id).join('<id>');
  });
  const text = id === '' ? answer.text : answer.text.split(id).join('<id>');
  let body: unknown = text;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      const { request_id: _ignored, ...rest } = parsed as Json;
      body = rest;
    } else body = parsed;
  } catch {
    // not JSON: compared as text
  }
  return { status: answer.status, headers, body };
}
