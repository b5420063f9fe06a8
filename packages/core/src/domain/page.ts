import { domainError, type DomainError } from './errors.js';
import { err, ok, type Result } from './result.js';

/** Items of a list page when the caller names no `limit`. Source: docs/CONTRACT.md "Discovery". */
export const DEFAULT_PAGE_LIMIT = 20;
/** The most items one list page holds (`limit` 1..100). Source: docs/CONTRACT.md "Discovery". */
export const MAX_PAGE_LIMIT = 100;
// A cursor we mint is far shorter; a longer one is refused before it is decoded.
const MAX_CURSOR_LENGTH = 512;
const CURSOR_VERSION = 1;

/**
 * One page asked of a port that lists: at most `limit` items, starting after the item
 * at `after` (absent: from the first item).
 */
export interface PageRequest {
  /** Items wanted, 1..{@link MAX_PAGE_LIMIT}. */
  readonly limit: number;
  /**
   * The port's position of the last item of the previous page, as the port itself gave
   * it in {@link Page.next}; opaque to everyone but that port. Absent for the first page.
   */
  readonly after?: string;
}

/** One page a port answers: items in list order, and where the next page starts. */
export interface Page<T> {
  /** At most `limit` items. */
  readonly items: readonly T[];
  /**
   * The position of the last item, present only when more items follow; passed back as
   * {@link PageRequest.after} for the next page. The port chooses its form (a sort key).
   */
  readonly next?: string;
}

/**
 * The raw paging input of a list operation: the query parameters `limit` and `cursor` as
 * sent (strings over HTTP, a number from an MCP tool). Absent when not sent.
 */
export interface PageQuery {
  readonly limit?: string | number;
  readonly cursor?: string;
}

/**
 * Turns a port's next position into the opaque `cursor` a client sends back
 * (`next_cursor`, and the `cursor` of the `Link: rel="next"` URL): base64url of a
 * versioned JSON object, so that its form can change without breaking cursors in flight.
 * Source: docs/CONTRACT.md "Discovery" (opaque cursor).
 *
 * @param position - the port's {@link Page.next}.
 */
export function cursorOf(position: string): string {
  return Buffer.from(JSON.stringify({ v: CURSOR_VERSION, after: position }), 'utf8').toString('base64url');
}

function positionOf(cursor: string): string | undefined {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/u.test(cursor)) return undefined;
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof decoded !== 'object' || decoded === null) return undefined;
    const { v, after } = decoded as { v?: unknown; after?: unknown };
    return v === CURSOR_VERSION && typeof after === 'string' && after.length > 0 ? after : undefined;
  } catch {
    return undefined;
  }
}

function parameterIssue(parameter: string, message: string): DomainError<'validation_failed'> {
  // The list operations have no body: the pointer names the query parameter, and `detail` says so.
  return domainError('validation_failed', `query parameter ${parameter}: ${message}`, { errors: [{ path: `/${parameter}`, message }] });
}

/**
 * Reads `limit` and `cursor`: `limit` a whole number 1..100 (a decimal string of digits
 * over HTTP, default {@link DEFAULT_PAGE_LIMIT}); `cursor` one this service minted
 * ({@link cursorOf}). Anything else → 400 `validation_failed` naming the parameter
 * (`errors: [{path: "/limit"}]`).
 * Source: docs/CONTRACT.md "Discovery"; docs/decisions.md "Discovery".
 */
export function parsePageQuery(query: PageQuery): Result<PageRequest, DomainError<'validation_failed'>> {
  let limit = DEFAULT_PAGE_LIMIT;
  if (query.limit !== undefined) {
    const raw = query.limit;
    const value = typeof raw === 'number' ? raw : /^[0-9]{1,3}$/u.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isInteger(value) || value < 1 || value > MAX_PAGE_LIMIT) {
      return err(parameterIssue('limit', `must be a whole number from 1 to ${MAX_PAGE_LIMIT}`));
    }
    limit = value;
  }
  if (query.cursor === undefined) return ok({ limit });
  const after = positionOf(query.cursor);
  if (after === undefined) return err(parameterIssue('cursor', 'is not a cursor this service gave; start again without it'));
  return ok({ limit, after });
}

/**
 * One page of `items` in ascending order of `keyOf(item)` (JavaScript string order):
 * those whose key sorts after `page.after`, at most `page.limit` of them, and `next` =
 * the last one's key when more follow. For ports that hold their items in memory; keys
 * must be unique.
 *
 * @param items - every item of the list, in any order (not changed).
 * @param keyOf - the item's sort and position key (e.g. its id).
 */
export function pageByKey<T>(items: Iterable<T>, keyOf: (item: T) => string, page: PageRequest): Page<T> {
  const after = page.after;
  const keyed: { key: string; item: T }[] = [];
  for (const item of items) {
    const key = keyOf(item);
    if (after === undefined || key > after) keyed.push({ key, item });
  }
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const taken = keyed.slice(0, page.limit);
  const last = taken[taken.length - 1];
  return keyed.length > page.limit && last !== undefined ? { items: taken.map((k) => k.item), next: last.key } : { items: taken.map((k) => k.item) };
}
