/**
 * The configuration file's webhook settings (docs/decisions.md "Webhooks"): `webhooks`
 * (retry schedule, SSRF rule) and each account's `webhook_endpoints`. Kept out of
 * settings.ts so that its schema and reading stay in one place.
 */
import { FINAL_RUN_EVENT_TYPES, isWebhookSecret, RUN_EVENT_TYPES, type RunEventType } from '@svc/core';
import { DEFAULT_RETRY_SCHEDULE_MS } from '@svc/adapter-webhooks/memory';

/** One `accounts[i].webhook_endpoints[j]`, validated; the secret read (from the file or its variable). */
export interface WebhookEndpointSettings {
  /** Unique across the file's webhook endpoints (and a PostgreSQL catalog's). */
  readonly id: string;
  readonly url: string;
  /** `whsec_` + base64; never logged. */
  readonly secret: string;
  /** Default the three final events. */
  readonly events: readonly RunEventType[];
}

/** `webhooks` of the configuration file. */
export interface WebhooksSettings {
  /** `retry_schedule_ms`: delays in ms before attempts 2, 3, …; the last repeats. Default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h. */
  readonly retryScheduleMs: readonly number[];
  /** `allow_private_addresses`, default false: deliveries to loopback, private, link-local … addresses are refused unless true. */
  readonly allowPrivateAddresses: boolean;
}

/** JSON Schema of one `webhook_endpoints` item: `secret` or `secret_env` (the name of the variable holding it), not both. */
export const webhookEndpointSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'url'],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[^/?#\\s]+$' },
    url: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2048 },
    secret: { type: 'string', minLength: 1 },
    secret_env: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
    events: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: [...RUN_EVENT_TYPES] } },
  },
} as const;

/** JSON Schema of `webhooks`. */
export const webhooksSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // Ms, 1 ms .. 24 h each; at most 50 entries (the last repeats anyway).
    retry_schedule_ms: { type: 'array', minItems: 1, maxItems: 50, items: { type: 'integer', minimum: 1, maximum: 86_400_000 } },
    allow_private_addresses: { type: 'boolean' },
  },
} as const;

/* eslint-disable @typescript-eslint/no-explicit-any -- the raw config is checked by the schema first */
function secretOf(w: any, env: NodeJS.ProcessEnv): string | undefined {
  return w.secret ?? (w.secret_env === undefined ? undefined : env[w.secret_env]);
}

/**
 * What the schema cannot say about the (schema-valid) accounts' endpoints, one line a
 * field: `secret` and `secret_env` both or neither, a variable not set, a secret that is
 * not `whsec_` + base64 of 24..64 bytes (never quoted).
 */
export function webhookErrorsIn(accounts: any[], env: NodeJS.ProcessEnv): string[] {
  const found: string[] = [];
  accounts.forEach((a, i) =>
    (a.webhook_endpoints ?? []).forEach((w: any, j: number) => {
      const at = `accounts[${i}].webhook_endpoints[${j}]`;
      if ((w.secret === undefined) === (w.secret_env === undefined)) return found.push(`${at}: needs exactly one of secret and secret_env`);
      const secret = secretOf(w, env);
      if (secret === undefined || secret === '') return found.push(`${at}.secret_env: the environment variable ${w.secret_env} is not set`);
      if (!isWebhookSecret(secret)) found.push(`${at}.${w.secret !== undefined ? 'secret' : 'secret_env'}: must be whsec_ followed by the base64 of 24 to 64 random bytes`);
      return undefined;
    }),
  );
  return found;
}

/** The endpoints of one schema-valid account whose {@link webhookErrorsIn} are none. */
export function webhookEndpointsOf(list: any[] | undefined, env: NodeJS.ProcessEnv): WebhookEndpointSettings[] {
  return (list ?? []).map((w) => ({ id: w.id, url: w.url, secret: secretOf(w, env) as string, events: w.events ?? [...FINAL_RUN_EVENT_TYPES] }));
}

/** `webhooks` with its defaults. */
export function webhooksSettingsOf(raw: any): WebhooksSettings {
  return { retryScheduleMs: raw?.retry_schedule_ms ?? [...DEFAULT_RETRY_SCHEDULE_MS], allowPrivateAddresses: raw?.allow_private_addresses ?? false };
}
/* eslint-enable @typescript-eslint/no-explicit-any */
