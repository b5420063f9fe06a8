// Catalog instances in child processes, for the propagation test: each has its own pool,
// LISTEN connection and cache, as separate API servers would.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CatalogStats } from '@svc/adapter-postgres';
import type { InstanceReply, InstanceRequest } from './catalog-instance.js';

const SCRIPT = fileURLToPath(new URL('./catalog-instance.ts', import.meta.url));

type Request = InstanceRequest extends infer R ? (R extends { seq: number } ? Omit<R, 'seq'> : never) : never;

/** One child process holding a PostgresCatalog. */
export class CatalogInstance {
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (message: InstanceReply) => {
      const waiter = this.pending.get(message.seq);
      if (waiter === undefined) return;
      this.pending.delete(message.seq);
      if (message.error !== undefined) waiter.reject(new Error(message.error));
      else waiter.resolve(message.value);
    });
    child.on('exit', () => {
      for (const waiter of this.pending.values()) waiter.reject(new Error('the instance exited'));
      this.pending.clear();
    });
  }

  /** Forks an instance on `schema` and waits until its catalog is open (at most 20 s). */
  static async start(url: string, schema: string): Promise<CatalogInstance> {
    const child = fork(SCRIPT, [], {
      execArgv: ['--conditions=source', '--import', 'tsx'],
      env: { ...process.env, CATALOG_URL: url, CATALOG_SCHEMA: schema },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the instance did not open its catalog within 20 s')), 20_000);
      child.once('message', () => {
        clearTimeout(timer);
        resolve();
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the instance exited with ${String(code)} before it was ready`));
      });
    });
    return new CatalogInstance(child);
  }

  private call(request: Request): Promise<unknown> {
    this.seq += 1;
    const seq = this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.child.send({ ...request, seq });
    });
  }

  /** The id of the live credential with this digest, or null. */
  find(digest: string): Promise<string | null> {
    return this.call({ op: 'find', digest }) as Promise<string | null>;
  }

  stats(): Promise<CatalogStats> {
    return this.call({ op: 'stats' }) as Promise<CatalogStats>;
  }

  /** Imports an API key by its digest through this instance's administration. */
  importKey(credentialId: string, accountId: string, sha256: string): Promise<string> {
    return this.call({ op: 'import', credential: { credentialId, accountId, kind: 'api_key', sha256, scopes: [] } }) as Promise<string>;
  }

  /** Revokes an API key through this instance's administration. */
  revoke(id: string): Promise<string> {
    return this.call({ op: 'revoke', id }) as Promise<string>;
  }

  /** Closes the catalog and waits for the process to exit (killed after 5 s). */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await this.call({ op: 'close' }).catch(() => undefined);
    await exited;
    clearTimeout(timer);
  }
}
