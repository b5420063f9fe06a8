/**
 * Request and response bodies of the bench, shared by the load generator and the
 * baseline servers.
 */

/** A run-start request with one file (Option 1 of `POST /api/v1/agents/{agent_id}/run`). */
export const RUN_START_BODY = JSON.stringify({
  files: [{ file_key: 'uploads/2026/q3-report.pdf', file_name: 'q3-report.pdf', content_type: 'application/pdf' }],
  message: 'Summarise the quarterly figures.',
});

/** Table the insert scenario writes to (unknown to the API server's in-memory demo tables). */
export const INSERT_TABLE = { schema: 'dbo', table: 'bench_rows' } as const;

/** Database, user and password of the bench's `sqlserver` connection (the scripted server takes any). */
export const TDS_LOGIN = { database: 'bench', user: 'bench', password: 'bench-password' } as const;

/** A row insert (`POST /api/v1/connections/{connection_id}/records`). */
export const INSERT_BODY = JSON.stringify({
  entity: `${INSERT_TABLE.schema}.${INSERT_TABLE.table}`,
  values: { sku: 'A-1', qty: 3, note: 'bench' },
});

/**
 * What the baselines answer: a body of the size and shape of the API server's run-start
 * answer (`202 {"data": {run_id, workflow_run_id, status, status_url, message}}`).
 */
export const BASELINE_RESPONSE_BODY = JSON.stringify({
  data: {
    run_id: '0f8fad5b-d9cb-469f-a165-70867728950e',
    workflow_run_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
    status: 'queued',
    status_url: 'http://127.0.0.1:8080/api/v1/runs/0f8fad5b-d9cb-469f-a165-70867728950e',
    message: 'Run queued with 1 file.',
  },
});

/** A JSON body of exactly `bytes` bytes (at least the empty shape's 22), for a baseline answering as much as a scenario. */
export function jsonBodyOfSize(bytes: number): string {
  const empty = JSON.stringify({ data: { padding: '' } });
  return JSON.stringify({ data: { padding: 'x'.repeat(Math.max(0, bytes - empty.length)) } });
}
