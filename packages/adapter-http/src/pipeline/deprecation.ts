/**
 * An operation marked deprecated in configuration.
 * Source: docs/CONTRACT.md "Index and versioning" (Deprecation RFC 9745, Sunset RFC 8594,
 * `Link; rel="deprecation"` RFC 9745 §3).
 */
export interface Deprecation {
  /** When the operation was (or will be) deprecated. */
  readonly deprecatedAt: Date;
  /** When it stops working; at least 180 days after the notice. Absent: not scheduled. */
  readonly sunsetAt?: Date;
  /** Human-readable page about the deprecation (`Link: <url>; rel="deprecation"`). */
  readonly link: string;
}

/** The deprecation headers of an operation. */
export function deprecationHeaders(d: Deprecation): Record<string, string> {
  const headers: Record<string, string> = {
    // RFC 9745 §2: a Structured Field Date, "@" + Unix seconds.
    Deprecation: `@${Math.floor(d.deprecatedAt.getTime() / 1000)}`,
    Link: `<${d.link}>; rel="deprecation"; type="text/html"`,
  };
  // RFC 8594 §3: an HTTP-date.
  if (d.sunsetAt !== undefined) headers['Sunset'] = d.sunsetAt.toUTCString();
  return headers;
}

/** Header name and value pairs, computed once per route and set in order. */
export type HeaderList = readonly (readonly [string, string])[];

/** {@link deprecationHeaders} as a list to set on every answer of the operation; empty when not deprecated. */
export function deprecationHeaderList(d: Deprecation | undefined): HeaderList {
  return d === undefined ? [] : Object.entries(deprecationHeaders(d));
}

/** Sets precomputed headers, in order (the deprecation stage of an operation). */
export function setHeaders(ctx: { readonly res: { setHeader(name: string, value: string): unknown } }, headers: HeaderList): void {
  for (const [name, value] of headers) ctx.res.setHeader(name, value);
}
