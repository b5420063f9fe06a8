/**
 * `svc keys create`: mints a credential. Prints the secret once, and the configuration
 * entry that holds only its SHA-256 digest (docs/CONTRACT.md "Authentication").
 *
 *   pnpm keys create --kind api_key --id key_ci
 *   pnpm keys create --kind oauth --id tok_ci --scope runs:write --scope runs:read --expires-in-days 30
 */
import { parseArgs } from 'node:util';
import { sha256Hex, SUPPORTED_SCOPES } from '@svc/core';
import { stringify } from 'yaml';
import { newSecret } from './dev-account.js';

const USAGE = `usage: svc keys create --kind api_key|oauth --id ID [--scope SCOPE]... [--expires-in-days N]
  scopes (oauth only): ${SUPPORTED_SCOPES.join(', ')}`;

function fail(message: string): never {
  process.stderr.write(`svc: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function main(argv: string[]): void {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      kind: { type: 'string', default: 'api_key' },
      id: { type: 'string' },
      scope: { type: 'string', multiple: true, default: [] },
      'expires-in-days': { type: 'string' },
    },
  });
  // `svc keys create`, and `pnpm keys create` (the script already names `keys`).
  const command = positionals.join(' ');
  if (command !== 'keys create' && command !== 'create') fail('unknown command');
  const kind = values.kind;
  if (kind !== 'api_key' && kind !== 'oauth') fail('--kind must be api_key or oauth');
  const id = values.id ?? fail('--id is required');
  const scopes = values.scope;
  const unknown = scopes.filter((s) => !(SUPPORTED_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) fail(`unknown scope ${unknown.join(', ')}`);
  if (kind === 'api_key' && scopes.length > 0) fail('API keys are not scoped; --scope is for oauth tokens');
  if (kind === 'oauth' && scopes.length === 0) fail('an oauth token needs at least one --scope');
  let expiresAt: string | undefined;
  if (values['expires-in-days'] !== undefined) {
    const days = Number(values['expires-in-days']);
    if (!Number.isFinite(days) || days <= 0) fail('--expires-in-days must be a positive number');
    expiresAt = new Date(Date.now() + days * 86_400_000).toISOString();
  }
  const secret = newSecret(kind === 'api_key' ? 'svc-' : 'svcpt_');
  const entry = { id, sha256: sha256Hex(secret), ...(kind === 'oauth' ? { scopes } : {}), ...(expiresAt ? { expires_at: expiresAt } : {}) };
  process.stdout.write(
    `secret (shown once, store it now): ${secret}\n\n` +
      `add under accounts[].${kind === 'api_key' ? 'api_keys' : 'oauth_tokens'} in the configuration:\n` +
      stringify([entry]),
  );
}

main(process.argv.slice(2));
