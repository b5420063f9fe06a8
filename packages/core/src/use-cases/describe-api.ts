import { SUPPORTED_SCOPES } from '../domain/principal.js';
import { DEFAULT_RATE_LIMITS, type WindowLimit } from '../domain/rate-limit.js';

/** Current major version, matching the URL path segment. Source: docs/api-spec.md "Versioning". */
export const API_VERSION = 'v1';

/** Minimum sunset notice in days. Source: docs/CONTRACT.md "Index and versioning". */
export const MINIMUM_SUNSET_NOTICE_DAYS = 180;

/** Names of the deprecation headers. Source: docs/CONTRACT.md (RFC 9745, RFC 8594, RFC 8288). */
export const DEPRECATION_HEADERS = ['Deprecation', 'Sunset', 'Link'] as const;

/** The seven rate-limit response headers. Source: docs/api-spec.md "Errors". */
export const RATE_LIMIT_HEADERS = [
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
] as const;

/**
 * What the index says, from configuration. URLs are absolute, without a trailing slash.
 * Build one with {@link apiIndexSettings} to get the defaults.
 */
export interface ApiIndexSettings {
  readonly name: string;
  readonly description: string;
  /** `{base_url}`, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  /** `{egress_url}`, e.g. `http://127.0.0.1:8081`. */
  readonly egressUrl: string;
  readonly documentationUrl: string;
  readonly developersUrl: string;
  readonly authenticationDocumentationUrl: string;
  /** OAuth protected resource metadata (RFC 9728). */
  readonly oauthMetadataUrl: string;
  readonly accessRequestUrl: string;
  readonly trial: { readonly available: boolean; readonly durationDays: number; readonly inviteRequired: boolean };
  readonly publicSandboxAvailable: boolean;
  /** The per-credential limit. */
  readonly credentialRateLimit: WindowLimit;
  readonly rateLimitsDocumentationUrl: string;
  readonly versioningDocumentationUrl: string;
  readonly llmsTxtUrl: string;
  readonly cliName: string;
  readonly cliDocumentationUrl: string;
  readonly webhooksDocumentationUrl: string;
}

/**
 * Fills {@link ApiIndexSettings} with defaults derived from the base URL; any member of
 * `overrides` wins. Trailing slashes of the URLs are removed. The documentation URLs are
 * pages of the docs site the API server serves under `{base_url}/docs` (one guide page
 * each, from `docs/guides/*.md`); the spec and docs/CONTRACT.md do not fix them.
 */
export function apiIndexSettings(
  baseUrl: string,
  egressUrl: string,
  overrides: Partial<ApiIndexSettings> = {},
): ApiIndexSettings {
  const base = baseUrl.replace(/\/+$/u, '');
  const docs = `${base}/docs`;
  return {
    name: 'Agent Runs and Connected Data API',
    description:
      'Starts asynchronous agent runs with uploaded files or a message, and writes single rows to connected SQL Server databases.',
    baseUrl: base,
    egressUrl: egressUrl.replace(/\/+$/u, ''),
    documentationUrl: docs,
    developersUrl: `${docs}/developers`,
    authenticationDocumentationUrl: `${docs}/authentication`,
    oauthMetadataUrl: `${base}/.well-known/oauth-protected-resource`,
    accessRequestUrl: `${docs}/access`,
    trial: { available: false, durationDays: 0, inviteRequired: true },
    publicSandboxAvailable: false,
    credentialRateLimit: DEFAULT_RATE_LIMITS.credential,
    rateLimitsDocumentationUrl: `${docs}/rate-limits`,
    versioningDocumentationUrl: `${docs}/versioning`,
    llmsTxtUrl: `${base}/llms.txt`,
    // The index's `clients.cli`: the CLI's name and how to get it, one line (issue 14; README "Command-line client").
    cliName: 'svc (from a clone of the repository: pnpm svc --help; installed elsewhere from its packed tarballs, see cli_documentation_url)',
    cliDocumentationUrl: `${docs}/cli`,
    webhooksDocumentationUrl: `${docs}/webhooks`,
    ...overrides,
  };
}

/** The API index object. Source: docs/api-spec.md "API index object" (every field). */
export interface ApiIndex {
  readonly name: string;
  readonly version: string;
  readonly base_url: string;
  readonly documentation_url: string;
  readonly openapi_url: string;
  readonly developers_url: string;
  readonly authentication: {
    readonly methods: readonly {
      readonly type: 'api_key';
      readonly documentation_url: string;
      readonly headers: readonly string[];
      readonly self_serve: boolean;
      readonly credential_creation: 'available_after_account_access';
      readonly account_access: 'invite_required';
      readonly flow: string;
      readonly metadata_url: string;
      readonly scopes_supported: readonly string[];
    }[];
  };
  readonly onboarding: {
    readonly account_access: 'invite_required';
    readonly access_request_url: string;
    readonly trial: { readonly available: boolean; readonly duration_days: number; readonly invite_required: boolean };
    readonly public_sandbox_available: boolean;
  };
  readonly rate_limits: {
    readonly requests: number;
    readonly window_seconds: number;
    readonly response_headers: readonly string[];
    readonly scope: string;
    readonly documentation_url: string;
  };
  readonly versioning: {
    readonly strategy: 'url_path';
    readonly current_version: string;
    readonly deprecation_headers: readonly string[];
    readonly minimum_sunset_notice_days: number;
    readonly documentation_url: string;
  };
  readonly resources: Readonly<Record<string, string>>;
  readonly description: string;
  readonly llms_txt_url: string;
  readonly clients: { readonly cli: string; readonly cli_documentation_url: string };
  readonly webhooks_documentation_url: string;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * Describes the API: `GET /api/v1` (no credential). The index is built once from
 * settings; `execute` returns the same frozen object every time.
 * Source: docs/api-spec.md "GET /api/v1" and "API index object"; docs/CONTRACT.md "Index and
 * versioning".
 */
export class DescribeApi {
  private readonly index: ApiIndex;

  constructor(settings: ApiIndexSettings) {
    const s = settings;
    const api = `${s.baseUrl}/api/${API_VERSION}`;
    this.index = deepFreeze({
      name: s.name,
      version: API_VERSION,
      base_url: s.baseUrl,
      documentation_url: s.documentationUrl,
      openapi_url: `${s.baseUrl}/openapi.yaml`,
      developers_url: s.developersUrl,
      authentication: {
        methods: [
          {
            type: 'api_key',
            documentation_url: s.authenticationDocumentationUrl,
            headers: ['X-API-Key', 'Authorization'],
            self_serve: false,
            credential_creation: 'available_after_account_access',
            account_access: 'invite_required',
            flow:
              'Send an API key (svc-...) in X-API-Key or as Authorization: Bearer. Run operations also accept an OAuth access token (svcpt_...) as Authorization: Bearer, with scope runs:write to start a run (also through an agent\'s MCP endpoint) and runs:read to read or list runs.',
            metadata_url: s.oauthMetadataUrl,
            scopes_supported: [...SUPPORTED_SCOPES],
          },
        ],
      },
      onboarding: {
        account_access: 'invite_required',
        access_request_url: s.accessRequestUrl,
        trial: {
          available: s.trial.available,
          duration_days: s.trial.durationDays,
          invite_required: s.trial.inviteRequired,
        },
        public_sandbox_available: s.publicSandboxAvailable,
      },
      rate_limits: {
        requests: s.credentialRateLimit.limit,
        window_seconds: s.credentialRateLimit.windowSeconds,
        response_headers: [...RATE_LIMIT_HEADERS],
        scope: 'credential',
        documentation_url: s.rateLimitsDocumentationUrl,
      },
      versioning: {
        strategy: 'url_path',
        current_version: API_VERSION,
        deprecation_headers: [...DEPRECATION_HEADERS],
        minimum_sunset_notice_days: MINIMUM_SUNSET_NOTICE_DAYS,
        documentation_url: s.versioningDocumentationUrl,
      },
      resources: {
        index: api,
        openapi: `${s.baseUrl}/openapi.yaml`,
        connection_records: `${api}/connections/{connection_id}/records`,
        egress_connection_records: `${s.egressUrl}/v1/connections/{connection_id}/records`,
        agent_runs: `${api}/agents/{agent_id}/run`,
        runs: `${api}/runs/{run_id}`,
        agents: `${api}/agents`,
        agent: `${api}/agents/{agent_id}`,
        connections: `${api}/connections`,
        connection: `${api}/connections/{connection_id}`,
        run_list: `${api}/runs`,
        agent_mcp: `${api}/agents/{agent_id}/mcp`,
      },
      description: s.description,
      llms_txt_url: s.llmsTxtUrl,
      clients: { cli: s.cliName, cli_documentation_url: s.cliDocumentationUrl },
      webhooks_documentation_url: s.webhooksDocumentationUrl,
    } satisfies ApiIndex);
  }

  /** @returns the index object (never fails). */
  execute(): ApiIndex {
    return this.index;
  }
}
