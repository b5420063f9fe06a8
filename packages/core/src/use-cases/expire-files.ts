import type { Clock } from '../ports/clock.js';
import type { FileCatalog } from '../ports/file-catalog.js';
import type { FileStore } from '../ports/file-store.js';
import type { RunStore } from '../ports/run-store.js';
import { liveRunOf } from './delete-file.js';
import { expiryReason, type ResolvedFileSettings } from './file-view.js';

/** What one {@link ExpireFiles} pass did. */
export interface ExpiryReport {
  /** Files made `expired` (their bytes removed). */
  readonly expired: number;
  /** `ready` files kept because a live run uses them (their `expires_at` moved on by `files.retention_days`). */
  readonly kept: number;
}

/**
 * One pass of the file sweep: every `pending` or `ready` file past its `expires_at` (at
 * most `limit`) becomes `expired` with a `reason`, its bytes removed; a `ready` file a
 * `queued` or `running` run uses is kept another `files.retention_days` instead. Safe on
 * several instances at once: each change is a compare-and-set on the status. The API
 * server runs it every minute. Source: docs/CONTRACT.md "Files" (expiry).
 * @throws DependencyUnavailableError when the catalog, the store or the run store is unreachable (the next pass retries).
 */
export class ExpireFiles {
  constructor(
    private readonly ports: { readonly catalog: FileCatalog; readonly store: FileStore; readonly runs: RunStore; readonly clock: Clock },
    private readonly settings: ResolvedFileSettings,
  ) {}

  /** @param limit - most files looked at in this pass, ≥ 1 (default 100). */
  async execute(limit = 100): Promise<ExpiryReport> {
    const now = this.ports.clock.now();
    let expired = 0;
    let kept = 0;
    for (const file of await this.ports.catalog.due(now, limit)) {
      if (file.status === 'ready' && (await liveRunOf(file, this.ports.runs)) !== undefined) {
        const moved = await this.ports.catalog.replace({ ...file, expiresAt: new Date(now.getTime() + this.settings.retentionMs) }, 'ready');
        if (moved.applied) kept += 1;
        continue;
      }
      // The record first: once it says expired, no run start can take the file, and then the bytes go.
      const done = await this.ports.catalog.replace({ ...file, status: 'expired', reason: expiryReason(file) }, file.status);
      if (!done.applied) continue;
      await this.ports.store.remove(file.fileKey);
      expired += 1;
    }
    return { expired, kept };
  }
}
