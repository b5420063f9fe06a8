import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ColumnValues } from '../domain/column-values.js';
import { domainError, validationFailed, type DomainError, type ValidationIssue } from '../domain/errors.js';
import { exactDecimalOf, ExactNumber } from '../domain/exact-number.js';
import { checkIdentifierPart } from '../domain/identifier.js';
import { parseEntityName } from '../domain/entity-name.js';
import type { FileReference } from '../domain/file-reference.js';
import { err, ok, type Result } from '../domain/result.js';
import { MAX_WRITE_PARAMETERS } from './common.js';
import { insertRecordBodySchema, updateRecordBodySchema } from './record-schemas.js';
import { filesRunBodySchema, messageRunBodySchema } from './run-schemas.js';
import { prepareFileBodySchema } from './file-schemas.js';

/** Wire body of the row insert, once valid. Source: docs/api-spec.md "POST .../records". */
export interface InsertRecordBody {
  readonly entity: string;
  readonly values: ColumnValues;
}

/** Wire body of the row update, once valid. Source: docs/CONTRACT.md "Row writes". */
export interface UpdateRecordBody extends InsertRecordBody {
  readonly key_column: string;
  readonly key_value: string | number | ExactNumber | boolean;
}

/** Wire body of a run request, Option 1. Source: docs/CONTRACT.md "Runs". */
export interface FilesRunBody {
  readonly files: readonly FileReference[];
  readonly message?: string;
  readonly process_together?: boolean;
  readonly notification_email?: string;
  readonly background_files?: readonly FileReference[];
}

/** Wire body of a run request, Option 2. Source: docs/CONTRACT.md "Runs". */
export interface MessageRunBody {
  readonly message: string;
}

/** Wire body of `POST /api/v1/files`, once valid. Source: docs/CONTRACT.md "Files". */
export interface PrepareFileBody {
  readonly file_name: string;
  readonly content_type: string;
  /** Bytes, ≥ 1 (the upper bound, `files.max_bytes`, is core `PrepareFile`'s). */
  readonly size_bytes: number;
  readonly sha256?: string;
}

/** Body of a run start, once valid: Option 1 (files) or Option 2 (message). Source: docs/CONTRACT.md "Runs". */
export type StartRunBody = FilesRunBody | MessageRunBody;

declare const wire: unique symbol;

/**
 * A request body as a wire door received it (the parsed JSON of an HTTP request), not yet
 * validated: the use case validates it exactly as a typed body. Made only by
 * {@link wireBody}, so that an in-process caller gets its body type-checked while a wire
 * door still passes what it received. Source: docs/decisions.md "In-process callers".
 */
export interface WireBody {
  readonly [wire]: true;
}

/** Marks `value`, parsed from the wire, as the unvalidated body of a use case input. */
export function wireBody(value: unknown): WireBody {
  return value as WireBody;
}

/** Most issues reported for one body; the rest are summarised by the count in `detail`. */
const MAX_ISSUES = 50;

// One ajv instance, every schema compiled once at module load (strict, allErrors,
// formats). Ajv2020 because OpenAPI 3.1 schemas are JSON Schema 2020-12.
const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true, unicodeRegExp: true });
// ajv-formats is CommonJS: under NodeNext its default import is the module object.
(addFormatsModule as unknown as { default: (a: Ajv2020) => void }).default(ajv);
ajv.addSchema([filesRunBodySchema, messageRunBodySchema]);
const insertValidator = ajv.compile<InsertRecordBody>(insertRecordBodySchema);
const updateValidator = ajv.compile<UpdateRecordBody>(updateRecordBodySchema);
const filesRunValidator = ajv.getSchema<FilesRunBody>('RunWithFiles') as ValidateFunction<FilesRunBody>;
const messageRunValidator = ajv.getSchema<MessageRunBody>('RunWithMessage') as ValidateFunction<MessageRunBody>;
const prepareFileValidator = ajv.compile<PrepareFileBody>(prepareFileBodySchema);

/** Escapes one JSON Pointer reference token (RFC 6901 §3). */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function valueAt(body: unknown, pointer: string): unknown {
  let here: unknown = body;
  for (const raw of pointer.split('/').slice(1)) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (here === null || typeof here !== 'object') return undefined;
    here = (here as Record<string, unknown>)[token];
  }
  return here;
}

const TYPE_NAMES: Record<string, string> = { object: 'a JSON object', array: 'an array', null: 'null' };

function issueOf(e: ErrorObject, body: unknown): ValidationIssue | undefined {
  const at = e.instancePath;
  switch (e.keyword) {
    case 'propertyNames':
      return undefined; // its cause is reported on the name itself, below
    case 'required':
      return { path: `${at}/${escapePointerToken(String(e.params['missingProperty']))}`, message: 'is required' };
    case 'additionalProperties':
      return {
        path: `${at}/${escapePointerToken(String(e.params['additionalProperty']))}`,
        message: 'is not a member of this request body',
      };
    case 'type': {
      const types = String(e.params['type']).split(',');
      return { path: at, message: `must be ${types.map((t) => TYPE_NAMES[t] ?? `a ${t}`).join(' or ')}` };
    }
    case 'pattern': {
      if (e.propertyName !== undefined) {
        const name = e.propertyName;
        const why = checkIdentifierPart(name);
        return {
          path: `${at}/${escapePointerToken(name)}`,
          message: `column name ${why.ok ? 'is not a valid identifier' : why.error}`,
        };
      }
      const value = valueAt(body, at);
      if (at === '/entity' && typeof value === 'string') {
        const parsed = parseEntityName(value);
        return { path: at, message: parsed.ok ? 'is not a valid entity name' : parsed.error };
      }
      if (at === '/key_column' && typeof value === 'string') {
        const why = checkIdentifierPart(value);
        return { path: at, message: why.ok ? 'is not a valid identifier' : why.error };
      }
      if (at.endsWith('/content_type')) return { path: at, message: 'must be a media type such as application/pdf' };
      if (at === '/file_name') return { path: at, message: 'must not contain a path separator (/ or \\) or a control character' };
      if (at === '/sha256') return { path: at, message: 'must be 64 lowercase hexadecimal digits' };
      return { path: at, message: 'has an invalid format' };
    }
    case 'format':
      return { path: at, message: e.params['format'] === 'email' ? 'must be an e-mail address' : `must be a ${String(e.params['format'])}` };
    case 'minItems':
      return { path: at, message: `must have at least ${String(e.params['limit'])} element(s)` };
    case 'maxItems':
      return { path: at, message: `must have at most ${String(e.params['limit'])} elements` };
    case 'minProperties':
      return { path: at, message: `must have at least ${String(e.params['limit'])} member(s)` };
    case 'maxProperties':
      return {
        path: at,
        message: `must have at most ${String(e.params['limit'])} members: SQL Server takes 2,100 parameters per request, sp_executesql uses two${Number(e.params['limit']) < MAX_WRITE_PARAMETERS ? ' and key_value one' : ''}`,
      };
    case 'minLength':
      return { path: at, message: Number(e.params['limit']) === 1 ? 'must not be empty' : `must be at least ${String(e.params['limit'])} characters` };
    case 'maxLength':
      return { path: at, message: `must be at most ${String(e.params['limit'])} characters` };
    default:
      return { path: at, message: e.message ?? 'is invalid' };
  }
}

function issuesOf(errors: readonly ErrorObject[] | null | undefined, body: unknown): ValidationIssue[] {
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  for (const e of errors ?? []) {
    const issue = issueOf(e, body);
    if (issue === undefined) continue;
    const id = `${issue.path}\u0000${issue.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    issues.push(issue);
  }
  return issues.slice(0, MAX_ISSUES);
}

/**
 * The body as the JSON Schemas see it: every {@link ExactNumber}, `NaN` and infinity
 * replaced by the number 0, so that `type: number` holds for them (ajv knows no class and
 * refuses non-finite numbers as if they were of another type); whether the number can be
 * written is checked after the schema, on the original (`invalid_value`). Unchanged parts
 * are shared.
 */
function schemaView(value: unknown): unknown {
  if (value instanceof ExactNumber || (typeof value === 'number' && !Number.isFinite(value))) return 0;
  if (Array.isArray(value)) {
    const items = value.map(schemaView);
    return items.every((item, i) => item === value[i]) ? value : items;
  }
  if (value === null || typeof value !== 'object') return value;
  const source = value as Record<string, unknown>;
  let changed = false;
  const view: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(source)) {
    const item = schemaView(source[key]);
    if (item !== source[key]) changed = true;
    // defineProperty: a member named __proto__ stays a member, never the prototype.
    Object.defineProperty(view, key, { value: item, enumerable: true, writable: true, configurable: true });
  }
  return changed ? view : value;
}

/**
 * True when `value` holds an {@link ExactNumber} or a non-finite number anywhere, i.e.
 * when {@link schemaView} would change it. A scan that allocates nothing: most bodies
 * hold neither, and building the view of a run-start body cost about 3 µs a request
 * (measured: 888 ms self time of 300k `StartRun` calls), most of it allocation.
 */
function needsView(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (value === null || typeof value !== 'object') return false;
  if (value instanceof ExactNumber) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (needsView(item)) return true;
    return false;
  }
  const source = value as Record<string, unknown>;
  for (const key in source) if (Object.prototype.hasOwnProperty.call(source, key) && needsView(source[key])) return true;
  return false;
}

function run<T>(validate: ValidateFunction<T>, body: unknown): Result<T, ValidationIssue[]> {
  if (validate(needsView(body) ? schemaView(body) : body)) return ok(body as T);
  return err(issuesOf(validate.errors, body));
}

type RecordBodyError = DomainError<'validation_failed' | 'invalid_value'>;

// The identifier rules are the domain's (checkIdentifierPart, in UTF-16 code units as
// sysname); the schema patterns spell the same rules out for the OpenAPI document, and
// this re-check keeps the domain the one judge should the two ever differ. Two names that
// differ only in case name one column of a case-insensitive database (SQL Server's
// default collations), which SQL Server refuses (error 264) after the body was accepted.
function checkColumnNames<T extends InsertRecordBody>(body: T): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if ('key_column' in body && typeof body.key_column === 'string') {
    const why = checkIdentifierPart(body.key_column);
    if (!why.ok) issues.push({ path: '/key_column', message: why.error });
  }
  const seen = new Map<string, string>();
  for (const name of Object.keys(body.values)) {
    const why = checkIdentifierPart(name);
    if (!why.ok) issues.push({ path: `/values/${escapePointerToken(name)}`, message: `column name ${why.error}` });
    const folded = name.toLowerCase();
    const first = seen.get(folded);
    if (first !== undefined) {
      issues.push({ path: `/values/${escapePointerToken(name)}`, message: `names the same column as ${first}: column names are compared case-insensitively` });
    } else {
      seen.set(folded, name);
    }
  }
  return issues.slice(0, MAX_ISSUES);
}

// docs/CONTRACT.md "Exact values": every number in `values` and `key_value` is written
// exactly or refused, naming the field.
function checkNumbers<T extends InsertRecordBody>(body: T): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const check = (path: string, value: unknown): void => {
    if (typeof value !== 'number' && !(value instanceof ExactNumber)) return;
    const exact = exactDecimalOf(value);
    if (!exact.ok) issues.push({ path, message: exact.error });
  };
  for (const name of Object.keys(body.values)) check(`/values/${escapePointerToken(name)}`, body.values[name]);
  if ('key_value' in body) check('/key_value', body.key_value);
  return issues.slice(0, MAX_ISSUES);
}

function checkRecordBody<T extends InsertRecordBody>(result: Result<T, ValidationIssue[]>): Result<T, RecordBodyError> {
  if (!result.ok) return err(validationFailed(result.error));
  const names = checkColumnNames(result.value);
  if (names.length > 0) return err(validationFailed(names));
  const numbers = checkNumbers(result.value);
  if (numbers.length === 0) return result;
  const first = numbers[0] as ValidationIssue;
  const more = numbers.length > 1 ? ` (and ${numbers.length - 1} more)` : '';
  return err(domainError('invalid_value', `${first.path}: ${first.message}${more}`, { errors: numbers }));
}

/**
 * Validates the body of a row insert against {@link insertRecordBodySchema}, then the
 * column names (identifier rules, no two equal case-insensitively) and the numbers
 * (docs/CONTRACT.md "Exact values").
 * @returns the typed body; `validation_failed` with every failed rule as issues with
 *   JSON Pointer paths; or `invalid_value` naming each number that cannot be written
 *   exactly.
 */
export function validateInsertRecordBody(body: unknown): Result<InsertRecordBody, RecordBodyError> {
  return checkRecordBody(run(insertValidator, body));
}

/**
 * Validates the body of a row update like {@link validateInsertRecordBody}, against
 * {@link updateRecordBodySchema}; `key_value` is checked as a number too.
 */
export function validateUpdateRecordBody(body: unknown): Result<UpdateRecordBody, RecordBodyError> {
  return checkRecordBody(run(updateValidator, body));
}

const OPTION_1_ONLY = ['files', 'process_together', 'notification_email', 'background_files'] as const;

/**
 * Validates a run request body: Option 1 when any member only Option 1 has is present
 * (`files`, `process_together`, `notification_email`, `background_files`), else Option 2.
 * A body with neither `files` nor `message` gets one issue on the body itself.
 * Source: docs/CONTRACT.md "Runs".
 */
export function validateStartRunBody(body: unknown): Result<FilesRunBody | MessageRunBody, ValidationIssue[]> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return err([{ path: '', message: 'must be a JSON object' }]);
  }
  const members = body as Record<string, unknown>;
  if (OPTION_1_ONLY.some((name) => name in members)) return run(filesRunValidator, body);
  if (!('message' in members)) {
    return err([{ path: '', message: 'must contain `files` (Option 1) or `message` (Option 2)' }]);
  }
  return run(messageRunValidator, body);
}

/**
 * Validates the body of a file preparation against `prepareFileBodySchema`.
 * @returns the typed body, or every failed rule as issues with JSON Pointer paths (e.g. `/file_name`).
 */
export function validatePrepareFileBody(body: unknown): Result<PrepareFileBody, ValidationIssue[]> {
  return run(prepareFileValidator, body);
}
