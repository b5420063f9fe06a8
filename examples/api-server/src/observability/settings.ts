import { compileTrustedProxies } from '@svc/adapter-http';

/** Where the admin listener binds (docs/CONTRACT.md "Admin listener"). */
export interface AdminListenSettings {
  /** False: no admin listener (no `/metrics`). Default true. */
  readonly enabled: boolean;
  /** Default `127.0.0.1`: never the public address. */
  readonly host: string;
  /** The API server's port, default 9464 (Prometheus' registered exporter port); 0 picks a free one (tests). */
  readonly port: number;
  /** A standalone worker's port (`pnpm worker`), default 9465, so that it can share a host and a config file with an API server. */
  readonly workerPort: number;
}

/** Observability and deployment settings (docs/decisions.md "Observability"). */
export interface ObservabilitySettings {
  /** `admin_listen`. */
  readonly admin: AdminListenSettings;
  /** `cors.origins`: origins allowed to call from a browser (lower case, no path); default none. */
  readonly corsOrigins: readonly string[];
  /** `trusted_proxies`: proxies whose `X-Forwarded-For`/`-Proto` are believed, for logs and spans only; default none. */
  readonly trustedProxies: readonly string[];
}

const port = { type: 'integer', minimum: 0, maximum: 65535 } as const;

/** The JSON Schema properties of these settings, spread into the configuration's schema. */
export const observabilityProperties = {
  admin_listen: {
    type: 'object',
    additionalProperties: false,
    properties: { enabled: { type: 'boolean' }, host: { type: 'string', minLength: 1 }, port, worker_port: port },
  },
  cors: {
    type: 'object',
    additionalProperties: false,
    properties: {
      // An origin as browsers send it: scheme, host and an optional port; no path, no '*'.
      origins: { type: 'array', items: { type: 'string', pattern: '^https?://[^/\\s*]+$' }, uniqueItems: true },
    },
  },
  trusted_proxies: { type: 'array', items: { type: 'string', minLength: 1 } },
} as const;

/** The raw configuration's part that {@link observabilityProperties} validated. */
interface RawObservability {
  readonly admin_listen?: { enabled?: boolean; host?: string; port?: number; worker_port?: number };
  readonly cors?: { origins?: string[] };
  readonly trusted_proxies?: string[];
}

/**
 * {@link ObservabilitySettings} from a configuration its schema accepted, with the
 * defaults: admin listener on `127.0.0.1:9464` (worker `9465`), no CORS origin, no
 * trusted proxy.
 * @throws RangeError naming the field (`trusted_proxies[i]: …`) when a trusted proxy is
 * not an address, a CIDR range or a proxy-addr name.
 */
export function observabilitySettingsFrom(raw: RawObservability): ObservabilitySettings {
  const trustedProxies = raw.trusted_proxies ?? [];
  trustedProxies.forEach((entry, i) => {
    try {
      compileTrustedProxies([entry]);
    } catch (error) {
      throw new RangeError(`trusted_proxies[${i}]: ${(error as Error).message}`);
    }
  });
  return {
    admin: {
      enabled: raw.admin_listen?.enabled ?? true,
      host: raw.admin_listen?.host ?? '127.0.0.1',
      port: raw.admin_listen?.port ?? 9464,
      workerPort: raw.admin_listen?.worker_port ?? 9465,
    },
    corsOrigins: (raw.cors?.origins ?? []).map((o) => o.toLowerCase()),
    trustedProxies,
  };
}
