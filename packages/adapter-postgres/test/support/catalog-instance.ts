// One API-server-like instance of the catalog in a child process (forked by
// test/support/instances.ts): it opens a PostgresCatalog on CATALOG_SCHEMA and answers
// lookups and changes sent over the IPC channel, as a request would make them.
import { PostgresCatalog } from '@svc/adapter-postgres';
import type { StoredCredential } from '@svc/core';

/** A request from the parent. */
export type InstanceRequest =
  | { readonly seq: number; readonly op: 'find'; readonly digest: string }
  | { readonly seq: number; readonly op: 'stats' }
  | { readonly seq: number; readonly op: 'import'; readonly credential: Omit<StoredCredential, 'expiresAt'> }
  | { readonly seq: number; readonly op: 'revoke'; readonly id: string }
  | { readonly seq: number; readonly op: 'close' };

/** The answer to a request with the same `seq`. */
export interface InstanceReply {
  readonly seq: number;
  readonly value?: unknown;
  readonly error?: string;
}

const send = (message: unknown): void => {
  process.send?.(message);
};

const catalog = await PostgresCatalog.open({
  connection: process.env['CATALOG_URL'] ?? '',
  schema: process.env['CATALOG_SCHEMA'] ?? '',
});

async function handle(request: InstanceRequest): Promise<unknown> {
  switch (request.op) {
    case 'find':
      return (await catalog.credentials.findByDigest(request.digest))?.credentialId ?? null;
    case 'stats':
      return catalog.stats();
    case 'import':
      return (await catalog.admin.importCredential(request.credential)).credentialId;
    case 'revoke':
      return (await catalog.admin.revokeApiKey(request.id)).credentialId;
    case 'close':
      await catalog.close();
      setImmediate(() => process.exit(0));
      return null;
  }
}

process.on('message', (request: InstanceRequest) => {
  handle(request).then(
    (value) => send({ seq: request.seq, value } satisfies InstanceReply),
    (error: unknown) => send({ seq: request.seq, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) } satisfies InstanceReply),
  );
});
process.on('disconnect', () => process.exit(0));
send({ ready: true });
