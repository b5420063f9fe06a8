import type { Knex } from 'knex';
import type { PasswordCipher } from './secrets.js';

/** What a PostgresCatalog's read side and its administration share (internal). */
export interface CatalogContext {
  readonly db: Knex;
  readonly schema: string;
  /** Bound of each call, in milliseconds. */
  readonly timeoutMs: number;
  readonly cipher: PasswordCipher;
  /** Called after this process changed the catalog: forgets the local cache at once (NOTIFY tells the others). */
  changed(): void;
}
