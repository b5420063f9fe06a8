/**
 * The configuration file's `files` section (docs/CONTRACT.md "Files"; docs/decisions.md
 * "File storage"): limits and expiry of files, and where their bytes are kept — a
 * directory of this machine (the default, `./data/files`) or an S3-compatible bucket.
 * Kept out of settings.ts so that its schema and reading stay in one place.
 */
import { resolve } from 'node:path';
import { DEFAULT_FILE_MAX_BYTES, DEFAULT_FILE_RETENTION_DAYS, DEFAULT_UPLOAD_TTL_MS } from '@svc/core';

/** Where the bytes of files are kept. */
export type FileStorageSettings =
  | { readonly kind: 'local'; readonly directory: string }
  | {
      readonly kind: 's3';
      /** Endpoint URL of an S3-compatible service (absent: AWS's own for `region`). */
      readonly endpoint?: string;
      readonly region: string;
      readonly bucket: string;
      readonly keyPrefix: string;
      readonly forcePathStyle: boolean;
      /** Read from the variables `access_key_id_env` and `secret_access_key_env` name (default `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`); absent: the SDK's default chain. Never logged. */
      readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
    };

/** `files` of the configuration file, with defaults. */
export interface FilesSettings {
  /** `max_bytes`: largest file, in bytes; default 104 857 600 (100 MiB). */
  readonly maxBytes: number;
  /** `upload_ttl_seconds`: life of an upload address and of a pending file, in seconds; default 3600. */
  readonly uploadTtlSeconds: number;
  /** `retention_days`: days an unreferenced ready file is kept after it was last used; default 7. */
  readonly retentionDays: number;
  /** `verify_keys`: whether a run start checks its file keys; default true. */
  readonly verifyKeys: boolean;
  /** `sweep_interval_ms`: ms between two passes of the expiry sweep; default 60 000. */
  readonly sweepIntervalMs: number;
  /** `storage`: where the bytes are. */
  readonly storage: FileStorageSettings;
}

/** The directory of the default local storage, relative to the working directory. */
export const DEFAULT_FILES_DIRECTORY = 'data/files';

const ENV_NAME = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' } as const;

/** JSON Schema of `files`. */
export const filesSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // 5 GiB: the most one S3 PUT takes.
    max_bytes: { type: 'integer', minimum: 1, maximum: 5 * 1024 ** 3 },
    upload_ttl_seconds: { type: 'integer', minimum: 60, maximum: 7 * 86_400 },
    retention_days: { type: 'number', exclusiveMinimum: 0, maximum: 3650 },
    verify_keys: { type: 'boolean' },
    sweep_interval_ms: { type: 'integer', minimum: 1000, maximum: 86_400_000 },
    storage: {
      oneOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['kind'],
          properties: { kind: { const: 'local' }, directory: { type: 'string', minLength: 1 } },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['kind', 'bucket'],
          properties: {
            kind: { const: 's3' },
            endpoint: { type: 'string', format: 'uri', pattern: '^https?://' },
            region: { type: 'string', minLength: 1 },
            bucket: { type: 'string', minLength: 3, maxLength: 63 },
            key_prefix: { type: 'string', maxLength: 512 },
            force_path_style: { type: 'boolean' },
            access_key_id_env: ENV_NAME,
            secret_access_key_env: ENV_NAME,
          },
        },
      ],
    },
  },
} as const;

/* eslint-disable @typescript-eslint/no-explicit-any -- the raw config is checked by the schema first */
/**
 * `files` of the (schema-valid) file with its defaults; the S3 credentials read from the
 * variables it names.
 * @returns the settings, or the lines naming each bad field (`files.storage.access_key_id_env: …`).
 */
export function filesSettingsOf(f: any, env: NodeJS.ProcessEnv): { readonly ok: true; readonly value: FilesSettings } | { readonly ok: false; readonly errors: readonly string[] } {
  const s = f?.storage;
  let storage: FileStorageSettings;
  if (s?.kind === 's3') {
    const idEnv: string = s.access_key_id_env ?? 'AWS_ACCESS_KEY_ID';
    const secretEnv: string = s.secret_access_key_env ?? 'AWS_SECRET_ACCESS_KEY';
    const id = env[idEnv] || undefined;
    const secret = env[secretEnv] || undefined;
    if ((id === undefined) !== (secret === undefined)) {
      return { ok: false, errors: [`files.storage: ${id === undefined ? idEnv : secretEnv} is not set, but ${id === undefined ? secretEnv : idEnv} is (set both, or neither for the SDK's default chain)`] };
    }
    storage = {
      kind: 's3',
      ...(s.endpoint !== undefined ? { endpoint: s.endpoint as string } : {}),
      region: s.region ?? 'us-east-1',
      bucket: s.bucket,
      keyPrefix: s.key_prefix ?? '',
      forcePathStyle: s.force_path_style ?? s.endpoint !== undefined,
      ...(id !== undefined && secret !== undefined ? { credentials: { accessKeyId: id, secretAccessKey: secret } } : {}),
    };
  } else {
    storage = { kind: 'local', directory: resolve(s?.directory ?? DEFAULT_FILES_DIRECTORY) };
  }
  return {
    ok: true,
    value: {
      maxBytes: f?.max_bytes ?? DEFAULT_FILE_MAX_BYTES,
      uploadTtlSeconds: f?.upload_ttl_seconds ?? DEFAULT_UPLOAD_TTL_MS / 1000,
      retentionDays: f?.retention_days ?? DEFAULT_FILE_RETENTION_DAYS,
      verifyKeys: f?.verify_keys ?? true,
      sweepIntervalMs: f?.sweep_interval_ms ?? 60_000,
      storage,
    },
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any */
