/**
 * One file of the docs site served under `/docs`: an HTML page, a stylesheet or a script,
 * rendered before the app is built (the composition root renders the guides of
 * `docs/guides/*.md` and reads the API reference's bundle). The adapter only serves it.
 */
export interface DocsPage {
  /**
   * Where it is served on the main listener: `/docs` (the home page), `/docs/<page>` or
   * `/docs/assets/<file>`; lowercase, no trailing slash. Matched as the router matches every
   * path (case-insensitive, an optional trailing slash).
   */
  readonly path: string;
  /** The `Content-Type` header, e.g. `text/html; charset=utf-8`. */
  readonly contentType: string;
  readonly body: Buffer;
  /** Its title, for an HTML page: listed with its URL in `/llms.txt`. Absent for assets. */
  readonly title?: string;
}

/** The docs site: every page and asset it serves. Source: docs/decisions.md "Docs site". */
export interface DocsSite {
  readonly pages: readonly DocsPage[];
}

/**
 * The `Content-Security-Policy` of every docs page and asset: nothing from another origin,
 * whatever a page or a bundled script asks for (docs/decisions.md "Docs site").
 * Each relaxation of `'self'` stays on this origin: `'unsafe-inline'` styles because the
 * API reference (Redoc) writes its styles into `<style>` elements at run time
 * (styled-components); `blob:` workers because it builds its search worker from a `Blob`;
 * `data:` images and fonts for the icons inlined in its bundle and the empty favicon.
 * Scripts are files of the site only (`'self'`, no inline script, no `eval`).
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
