import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'chai';
import { parse } from 'yaml';
import type { Answer } from './harness.js';

type Obj = Record<string, unknown>;

const SCHEMA_BASE = 'https://openapi.svc.test/components/schemas/';

/** Points `#/components/schemas/X` at the absolute id each component is registered under. */
function absoluteRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(absoluteRefs);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Obj = {};
  for (const [key, value] of Object.entries(schema)) {
    out[key] =
      key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')
        ? `${SCHEMA_BASE}${value.slice('#/components/schemas/'.length)}`
        : absoluteRefs(value);
  }
  return out;
}

/**
 * Checks real answers against the served OpenAPI document: the documented response of
 * the operation and status must exist, its media type must be the one sent, the body
 * must validate against its schema (components compiled with Ajv 2020-12) and every
 * documented header must be present (integers as integers), but one documented with
 * `required: false`.
 */
export class OpenApiChecker {
  private readonly ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly doc: Obj) {
    (addFormatsModule as unknown as { default: (a: Ajv2020) => void }).default(this.ajv);
    const schemas = ((doc['components'] as Obj)['schemas'] ?? {}) as Obj;
    for (const [name, schema] of Object.entries(schemas)) {
      this.ajv.addSchema(absoluteRefs(schema) as Obj, `${SCHEMA_BASE}${name}`);
    }
  }

  /**
   * Checkers made by {@link OpenApiChecker.fromYaml}, by the YAML text they were made from: a
   * checker holds nothing but the document and the validators compiled from it, so the
   * tests that start fresh apps for every case (and get the same document each time) share
   * one instead of compiling the document again, ~90 ms a case.
   */
  private static readonly byText = new Map<string, OpenApiChecker>();

  /** Parses the served YAML: the checker made from the same text before, if any. */
  static fromYaml(text: string): OpenApiChecker {
    let checker = OpenApiChecker.byText.get(text);
    if (checker === undefined) {
      checker = new OpenApiChecker(parse(text) as Obj);
      OpenApiChecker.byText.set(text, checker);
    }
    return checker;
  }

  private components(kind: string): Obj {
    return ((this.doc['components'] as Obj)[kind] ?? {}) as Obj;
  }

  private deref(kind: string, node: unknown): Obj {
    const ref = (node as Obj | undefined)?.['$ref'];
    if (typeof ref === 'string') {
      const prefix = `#/components/${kind}/`;
      expect(ref.startsWith(prefix), `${ref} points into components/${kind}`).to.equal(true);
      const target = this.components(kind)[ref.slice(prefix.length)];
      expect(target, `${ref} resolves`).to.be.an('object');
      return target as Obj;
    }
    return node as Obj;
  }

  /** The operation object of `method` on the path template `path`. */
  operation(path: string, method: string): Obj {
    const item = (this.doc['paths'] as Obj)[path] as Obj | undefined;
    expect(item, `path ${path} is documented`).to.be.an('object');
    const op = item?.[method.toLowerCase()] as Obj | undefined;
    expect(op, `${method} ${path} is documented`).to.be.an('object');
    return op as Obj;
  }

  /** The validator of a schema (inline or `$ref`). */
  validator(schema: unknown): ValidateFunction {
    const key = JSON.stringify(schema);
    let v = this.compiled.get(key);
    if (v === undefined) {
      v = this.ajv.compile(absoluteRefs(schema) as Obj);
      this.compiled.set(key, v);
    }
    return v;
  }

  /** Asserts that `body` validates against the component schema `name`. */
  expectSchema(name: string, body: unknown): void {
    const v = this.validator({ $ref: `#/components/schemas/${name}` });
    expect(v(body), `${name}: ${JSON.stringify(v.errors)}\nbody: ${JSON.stringify(body)}`).to.equal(true);
  }

  /**
   * Asserts that `answer` is a documented response of `method path` (path template as in
   * the document), with a body that validates and every documented header present.
   */
  expectDocumented(path: string, method: string, answer: Answer): void {
    const op = this.operation(path, method);
    const responses = op['responses'] as Obj;
    const where = `${method} ${path} → ${answer.status}`;
    expect(responses, `${where}: responses`).to.have.property(String(answer.status));
    const response = this.deref('responses', responses[String(answer.status)]);

    const content = response['content'] as Obj | undefined;
    if (content === undefined) {
      expect(answer.text, `${where}: no body documented`).to.equal('');
    } else {
      const mediaType = (answer.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
      expect(Object.keys(content), `${where}: media type`).to.include(mediaType);
      const schema = (content[mediaType] as Obj)['schema'];
      const v = this.validator(schema);
      expect(v(answer.body), `${where}: ${JSON.stringify(v.errors)}\nbody: ${answer.text}`).to.equal(true);
    }

    for (const [name, node] of Object.entries((response['headers'] ?? {}) as Obj)) {
      const header = this.deref('headers', node);
      const value = answer.headers.get(name);
      // `required: false` (a list page's `Link`, absent on the last page) may be absent; every other documented header must be sent.
      if (value === null && header['required'] === false) continue;
      expect(value, `${where}: documented header ${name}`).to.be.a('string');
      const type = (header['schema'] as Obj | undefined)?.['type'];
      if (type === 'integer') expect(value, `${where}: header ${name} is an integer`).to.match(/^-?\d+$/);
    }
  }
}
