import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_RATE_LIMITS, type ApiIndex, type WindowLimit } from '@svc/core';
import type { DocsSite } from './docs-site.js';
import { formatBytes } from './settings.js';

/**
 * The `/llms.txt` text (llmstxt.org format): what the API does and where its machine
 * readable description is, for people and language models. Also served at `/docs` when
 * the app has no docs site. The credential limit comes from the index; `limits` gives the
 * per-agent limit and the body limit the server enforces (default: the core's defaults).
 * With `docs`, a "Docs" section links every titled page of the site (`{base_url}` + its path).
 */
export function llmsTxt(
  index: ApiIndex,
  limits: { readonly agent: WindowLimit; readonly bodyLimitBytes: number } = { agent: DEFAULT_RATE_LIMITS.agent, bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES },
  docs?: DocsSite,
): string {
  const r = index.resources;
  const guides = (docs?.pages ?? []).flatMap((page) => (page.title !== undefined ? [`- [${page.title}](${index.base_url}${page.path})`] : []));
  return `# ${index.name}

> ${index.description}

Every operation hangs off ${index.base_url}/api/${index.version}. Send an API key (svc-...) in X-API-Key or as Authorization: Bearer; run operations also accept OAuth access tokens (svcpt_...) with scope runs:write (start) or runs:read (read). Success bodies are {"data": ...} (except the index); errors are RFC 9457 problem details with status, detail, title and code.

## Operations

- GET ${r['index'] ?? ''}: the API index (no credential)
- POST ${r['connection_records'] ?? ''}: insert one row {"entity": "schema.table", "values": {...}} (SQL Server connections only) → 201 {"data": {"rows_affected": 1}}
- PATCH ${r['connection_records'] ?? ''}: update the row selected by {"key_column", "key_value"} → 200 {"data": {"rows_affected": 0|1}}; 409 when the key selects several rows
- POST ${r['egress_connection_records'] ?? ''}: the same row writes from the stable egress IP address (or send X-Svc-Egress: true)
- POST ${r['agent_runs'] ?? ''}: start a run with {"files": [...]} (1-50 files, optional message, process_together, notification_email, background_files up to 10) or {"message": "..."} → 202, Location = status_url
- GET ${r['runs'] ?? ''}: a run's status (queued, running, succeeded, failed, cancelled)
- POST ${r['runs'] ?? ''}/cancel: cancel a run → 200 {"data": run}: queued → cancelled at once; running → stays running with cancel_requested_at until it ends cancelled; a final run → 409 run_final (scope runs:write)
- GET ${r['runs'] ?? ''}/events: the run's events as text/event-stream (run.queued, run.running, run.succeeded, run.failed, run.cancelled; data = the run), history first, resumable with Last-Event-ID, closed after the final event (scope runs:read)
- GET ${r['agents'] ?? ''}?limit=1..100&cursor=...: your agents → 200 {"data": [...], "next_cursor"}, next page also in Link: rel="next"; GET ${r['agent'] ?? ''}: one agent (name, description, run_url, mcp_url) (API keys only)
- GET ${r['connections'] ?? ''}?limit=&cursor=: your connections as a bare JSON array, next page only in Link: rel="next"; GET ${r['connection'] ?? ''}: one connection (type, writable, egress_source_address, records_url) (API keys only)
- GET ${r['run_list'] ?? ''}?agent_id=&status=&limit=&cursor=: your runs, newest first → 200 {"data": [...], "next_cursor": "..." | null}; limit 1-100 (default 20); the next page is also in Link: <...>; rel="next"
- POST ${index.base_url}/api/${index.version}/agents/{agent_id}/mcp: the agent's MCP endpoint (Streamable HTTP, stateless), tools start_run, get_run, list_runs, list_connections, insert_record, update_record with the same credentials, scopes and limits; a domain error is a tool result with isError and the problem details

## Limits

- ${index.rate_limits.requests} requests per ${index.rate_limits.window_seconds} seconds per credential; ${limits.agent.limit} run starts per ${limits.agent.windowSeconds} seconds per agent. Over a limit: 429 with ${index.rate_limits.response_headers.join(', ')}.
- JSON bodies up to ${formatBytes(limits.bodyLimitBytes)}.

## Specification

- [OpenAPI 3.1](${index.openapi_url})
- Versioning: URL path (/api/v1); deprecated operations send ${index.versioning.deprecation_headers.join(', ')}; minimum sunset notice ${index.versioning.minimum_sunset_notice_days} days.
${guides.length > 0 ? `\n## Docs\n\n${guides.join('\n')}\n` : ''}`;
}
