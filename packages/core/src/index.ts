/**
 * `@svc/core`: the rules of the Agent Runs and Connected Data API, free of any
 * framework. Domain values, ports, use cases, JSON Schemas and in-memory adapters.
 * Fakes, builders and contract suites live in `@svc/core/testing`.
 */
export * from './domain/result.js';
export * from './domain/errors.js';
export * from './domain/identifier.js';
export * from './domain/entity-name.js';
export * from './domain/exact-number.js';
export * from './domain/column-values.js';
export * from './domain/egress-route.js';
export * from './domain/connection.js';
export * from './domain/agent.js';
export * from './domain/file-reference.js';
export * from './domain/run-request.js';
export * from './domain/run.js';
export * from './domain/run-event.js';
export * from './domain/webhook-endpoint.js';
export * from './domain/principal.js';
export * from './domain/rate-limit.js';
export * from './domain/limits.js';
export * from './domain/error-type.js';
export * from './domain/page.js';
export * from './domain/idempotency.js';
export * from './domain/stored-file.js';
export * from './domain/upload-address.js';

export type * from './ports/credential-store.js';
export type * from './ports/connection-catalog.js';
export type * from './ports/agent-catalog.js';
export type * from './ports/record-writer.js';
export type * from './ports/run-store.js';
export type * from './ports/run-event-log.js';
export type * from './ports/run-queue.js';
export type * from './ports/rate-limit-store.js';
export type * from './ports/clock.js';
export type * from './ports/id-generator.js';
export type * from './ports/run-processor.js';
export type * from './ports/notifier.js';
export type * from './ports/run-backend.js';
export type * from './ports/idempotency-store.js';
export type * from './ports/webhook-endpoint-catalog.js';
export type * from './ports/file-catalog.js';
export * from './ports/file-store.js';
export * from './ports/logger.js';
export * from './ports/telemetry.js';

export * from './schemas/common.js';
export * from './schemas/record-schemas.js';
export * from './schemas/run-schemas.js';
export * from './schemas/response-schemas.js';
export * from './schemas/validate.js';
export * from './schemas/file-schemas.js';

export * from './use-cases/rate-limit-policy.js';
export * from './use-cases/authenticate.js';
export * from './use-cases/record-write.js';
export * from './use-cases/insert-record.js';
export * from './use-cases/update-record.js';
export * from './use-cases/run-view.js';
export * from './use-cases/start-run.js';
export * from './use-cases/get-run.js';
export * from './use-cases/cancel-run.js';
export * from './use-cases/stream-run-events.js';
export * from './use-cases/agent-view.js';
export * from './use-cases/connection-view.js';
export * from './use-cases/list-agents.js';
export * from './use-cases/get-agent.js';
export * from './use-cases/list-connections.js';
export * from './use-cases/get-connection.js';
export * from './use-cases/list-runs.js';
export * from './use-cases/find-agent.js';
export * from './use-cases/describe-api.js';
export * from './use-cases/run-lifecycle.js';
export * from './use-cases/claim-idempotency-key.js';
export * from './use-cases/file-view.js';
export * from './use-cases/prepare-file.js';
export * from './use-cases/receive-file-upload.js';
export * from './use-cases/complete-file.js';
export * from './use-cases/get-file.js';
export * from './use-cases/list-files.js';
export * from './use-cases/delete-file.js';
export * from './use-cases/expire-files.js';
export * from './use-cases/run-files.js';

export * from './telemetry/tracing.js';
export * from './telemetry/observed-ports.js';
export * from './memory/index.js';
export * from './core.js';
