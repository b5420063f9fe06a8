import type { Logger } from '@svc/core';
import type { Adapters } from '../container.js';
import { PrometheusTelemetry } from './metrics.js';

/**
 * The metrics of one API server on its adapters: the queue depth of its runs backend,
 * the pools of its SQL Server writer and the readiness checks of `/readyz`
 * (docs/decisions.md "Observability").
 */
export function serverTelemetry(adapters: Adapters, logger: Logger): PrometheusTelemetry {
  const { runs, recordWriter, readiness } = adapters;
  return new PrometheusTelemetry({
    ...(runs.queueDepth !== undefined ? { queueDepth: () => runs.queueDepth?.() ?? Promise.resolve(0) } : {}),
    ...(recordWriter.poolStats !== undefined ? { poolStats: () => recordWriter.poolStats?.() ?? [] } : {}),
    readiness,
    logger,
  });
}
