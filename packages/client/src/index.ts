/**
 * `@svc/client`: the typed client of the Agent Runs and Connected Data API (`/api/v1`).
 * {@link SvcClient} sends the credential, retries 429/503 after `Retry-After`, turns problem
 * details into {@link SvcApiError}, waits for a run's final status, and uploads files
 * (prepare, a streamed PUT, complete; {@link SvcFileRejectedError} for a rejected one). The types are
 * generated from the served OpenAPI document (`paths`, `components`, `operations`).
 */
export * from './client.js';
export * from './errors.js';
export type { components, operations, paths } from './generated/api.js';
