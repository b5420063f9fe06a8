/**
 * The problem details examples of the OpenAPI document (`components.examples`), one per
 * answer an operation can give: copied from real answers of this server (only
 * `request_id` and the ids in `detail` differ from one request to the next). The test
 * `test/document-examples.test.ts` checks that each validates against the response it is
 * listed under and has the keys of a real answer of that operation and status.
 */
import { STATUS_BY_CODE } from '../problem.js';

// The JSON types of components.ts, repeated: components.ts names the examples (no import cycle).
type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };

/** The `request_id` of every example (a real answer echoes its `X-Request-Id`). */
const REQUEST_ID = '7c5a7be2-9988-4cb3-a297-d6f03d3e1285';

const TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 408: 'Request Timeout', 409: 'Conflict',
  413: 'Content Too Large', 415: 'Unsupported Media Type', 417: 'Expectation Failed', 422: 'Unprocessable Content', 429: 'Too Many Requests',
  431: 'Request Header Fields Too Large', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

type Code = keyof typeof STATUS_BY_CODE;

function problem(code: Code, detail: string, errors?: readonly { path: string; message: string }[]): Json {
  const status = STATUS_BY_CODE[code];
  return { type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, code, ...(errors !== undefined ? { errors } : {}), request_id: REQUEST_ID };
}

const example = (summary: string, value: Json): Json => ({ summary, value });

/**
 * A queued run as `GET /api/v1/runs/{run_id}` answers it (data of `RunResponse`, an item of
 * `RunList`, the MCP `get_run` result): one object for every example that shows a run.
 */
export const RUN_EXAMPLE = {
  run_id: '570b6c23-d987-478f-8769-d40f8a571099',
  workflow_run_id: 'fa392f4e-26f8-45a6-be2f-193451bb89d4',
  agent_id: 'agent_demo',
  status: 'queued',
  created_at: '2026-05-12T09:14:03.118Z',
  updated_at: '2026-05-12T09:14:03.118Z',
  status_url: 'https://api.svc.example.test/api/v1/runs/570b6c23-d987-478f-8769-d40f8a571099',
  attempts: 0,
} as const;

/**
 * A running run as `POST /api/v1/runs/{run_id}/cancel` answers it: still `running`, with
 * `cancel_requested_at`, until its worker stops it (a real answer of the demo processor).
 */
export const CANCELLING_RUN_EXAMPLE = {
  run_id: '570b6c23-d987-478f-8769-d40f8a571099',
  workflow_run_id: 'fa392f4e-26f8-45a6-be2f-193451bb89d4',
  agent_id: 'agent_demo',
  status: 'running',
  created_at: '2026-05-12T09:14:03.118Z',
  updated_at: '2026-05-12T09:14:03.131Z',
  status_url: 'https://api.svc.example.test/api/v1/runs/570b6c23-d987-478f-8769-d40f8a571099',
  attempts: 1,
  progress: { percent: 0, message: 'Started.', updated_at: '2026-05-12T09:14:03.133Z' },
  cancel_requested_at: '2026-05-12T09:14:03.402Z',
} as const;

/**
 * The examples, by name. A name is the `code` it shows, or `<code>_<case>` where one code
 * has answers of different shapes or causes (a `validation_failed` of a body or of a
 * query parameter; an `invalid_header` of `X-Svc-Egress` or of Node's HTTP parser).
 */
export const PROBLEM_EXAMPLES = {
  bad_request: example('Not HTTP/1.1 (refused by the HTTP parser, before any operation)', problem('bad_request', 'The request is not valid HTTP/1.1.')),
  invalid_header: example(
    'A malformed header or framing (refused by the HTTP parser, before any operation)',
    problem('invalid_header', 'A request header is malformed or its framing (Content-Length, Transfer-Encoding) is invalid.'),
  ),
  invalid_header_egress: example('X-Svc-Egress neither true nor false', problem('invalid_header', 'Header X-Svc-Egress must be true or false.')),
  validation_failed: example(
    'A body that breaks its schema: every failed rule in `errors`',
    problem('validation_failed', '/entity: must be written schema.table: exactly two parts separated by one dot (and 1 more)', [
      { path: '/entity', message: 'must be written schema.table: exactly two parts separated by one dot' },
      { path: '/values/qty', message: 'must be a string or a number or a boolean or null' },
    ]),
  ),
  validation_failed_query: example(
    'A query parameter out of range',
    problem('validation_failed', 'query parameter limit: must be a whole number from 1 to 100', [{ path: '/limit', message: 'must be a whole number from 1 to 100' }]),
  ),
  validation_failed_run: example(
    'A run body that breaks its schema',
    problem('validation_failed', '/files: must have at least 1 element(s)', [{ path: '/files', message: 'must have at least 1 element(s)' }]),
  ),
  validation_failed_idempotency_key: example(
    'An Idempotency-Key that is empty, too long or not printable ASCII',
    problem('validation_failed', 'header Idempotency-Key: must be 1 to 255 printable ASCII characters, sent once', [
      { path: '/Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters, sent once' },
    ]),
  ),
  idempotency_key_in_use: example(
    'The first request with this key is still in flight',
    problem('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry after Retry-After seconds to get its answer.'),
  ),
  idempotency_key_reused: example(
    'The key was used with another request',
    problem('idempotency_key_reused', 'This Idempotency-Key was used with another request (method, path or body); send a new key for a new request.'),
  ),
  invalid_cursor: example(
    'A cursor this service did not sign for this list',
    problem('invalid_cursor', 'query parameter cursor: is not a cursor of this list; start again without it', [
      { path: '/cursor', message: 'is not a cursor of this list; start again without it' },
    ]),
  ),
  invalid_json: example('Not JSON', problem('invalid_json', 'The request body is not valid JSON (at line 1, column 1).')),
  writes_not_supported: example(
    'A connection type other than sqlserver',
    problem('writes_not_supported', 'Connection 9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d is of type postgresql, which does not allow writes; only sqlserver connections do.'),
  ),
  unknown_entity: example('No such table', problem('unknown_entity', 'Entity dbo.nothing does not exist or is not visible.')),
  unknown_column: example('No such column', problem('unknown_column', 'Column nope does not exist in dbo.orders.')),
  constraint_violation: example('A key or constraint of the table refuses the row', problem('constraint_violation', 'The row violates a constraint of dbo.orders.')),
  invalid_value: example(
    'A number that cannot be written exactly',
    problem(
      'invalid_value',
      '/values/qty: cannot be written exactly: a number must be an integer within bigint (-9223372036854775808..9223372036854775807) or a decimal of at most 38 digits, at most 38 of them after the decimal point',
      [
        {
          path: '/values/qty',
          message:
            'cannot be written exactly: a number must be an integer within bigint (-9223372036854775808..9223372036854775807) or a decimal of at most 38 digits, at most 38 of them after the decimal point',
        },
      ],
    ),
  ),
  missing_credential: example('No credential', problem('missing_credential', 'A credential is required: send X-API-Key or Authorization: Bearer.')),
  invalid_credential: example('An unknown credential, or two that disagree', problem('invalid_credential', 'The credential is not valid.')),
  expired_credential: example('An expired credential', problem('expired_credential', 'The credential has expired.')),
  unsupported_credential: example('An OAuth access token on an operation that takes API keys only', problem('unsupported_credential', 'This operation does not accept OAuth access tokens; use an API key.')),
  insufficient_scope: example('An access token without the scope', problem('insufficient_scope', 'The access token lacks the scope runs:read this operation needs.')),
  not_found: example('Missing, or of another account (the same answer)', problem('not_found', 'The agent was not found.')),
  run_final: example('The run is already final', problem('run_final', 'The run is already succeeded; only a queued or running run can be cancelled.')),
  file_in_use: example('A live run uses the file', problem('file_in_use', 'The file is used by run 570b6c23-d987-478f-8769-d40f8a571099, which is not final yet; cancel it or wait for it to end.')),
  file_not_pending: example('The file is not pending', problem('file_not_pending', 'The file is ready; only a pending file takes an upload.')),
  file_not_uploaded: example('Complete before the upload', problem('file_not_uploaded', 'No bytes were uploaded for the file yet: PUT them to upload_url first.')),
  upload_url_invalid: example('A changed or expired upload address', problem('upload_url_invalid', 'The upload address has expired; prepare the file again.')),
  upload_too_large: example('More bytes than size_bytes', problem('upload_too_large', 'The upload has more bytes than size_bytes (48213) declared when the file was prepared; nothing was kept.')),
  upload_size_mismatch: example('Fewer bytes than size_bytes', problem('upload_size_mismatch', 'The upload has fewer bytes than size_bytes (48213) declared when the file was prepared; nothing was kept.')),
  ambiguous_key: example('The key selects several rows', problem('ambiguous_key', 'key_column id selects 2 rows; nothing was changed.')),
  payload_too_large: example('A body over the limit', problem('payload_too_large', 'The request body is larger than 1048576 bytes.')),
  unsupported_media_type: example('Not application/json', problem('unsupported_media_type', 'The request body must be JSON, sent with Content-Type: application/json.')),
  rate_limited: example('Over the credential limit', problem('rate_limited', 'Rate limit exceeded for this credential: 600 requests per window; retry in 42 seconds.')),
  internal_error: example(
    'A bug (logged with the request id)',
    problem('internal_error', `An unexpected error occurred; quote request id ${REQUEST_ID} when reporting it.`),
  ),
  connection_unavailable: example('The database cannot be reached', problem('connection_unavailable', 'The database of this connection cannot be reached.')),
  service_unavailable: example('A dependency of this service is lost', problem('service_unavailable', 'A service this operation depends on is unavailable; nothing was done. Retry later.')),
  connection_timeout: example('The database did not answer in time', problem('connection_timeout', 'The database of this connection did not answer in time.')),
  request_timeout: example('Not received in time (HTTP parser)', problem('request_timeout', 'The request was not received completely in time.')),
  expectation_failed: example('Expect other than 100-continue', problem('expectation_failed', 'Only Expect: 100-continue is supported.')),
  request_header_fields_too_large: example('Header section over 16 KiB (HTTP parser)', problem('request_header_fields_too_large', 'The request header section is too large.')),
} as const satisfies Record<string, Json>;

/** The name of an example of {@link PROBLEM_EXAMPLES}. */
export type ProblemExampleName = keyof typeof PROBLEM_EXAMPLES;

/** `components.examples`. */
export function exampleComponents(): { readonly [name: string]: Json } {
  return PROBLEM_EXAMPLES;
}
