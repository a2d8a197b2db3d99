import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

// Mintlify's published OpenAPI documents (test/fixtures/mintlify/, README there names the commit), read as a client
// generated from them would: each operation at its full path (server prefix + path), its requests and its answers.

type Schema = Record<string, any>;

export interface MintlifyOperation {
  document: string;
  method: 'GET' | 'POST';
  /** Path as the document writes it, with the server's path prefix (`/discovery`, `/v1`) in front. */
  path: string;
  /** `POST /discovery/v1/search/{domain}`. */
  name: string;
  deprecated: boolean;
  parameters: Array<{ name: string; in: 'path' | 'query' | 'header'; required: boolean; schema: Schema }>;
  requestBody?: Schema;
  responses: Record<string, { contentTypes: Record<string, Schema | undefined>; headers: string[] }>;
}

const fixtures = path.resolve(__dirname, '../fixtures/mintlify');
export const mintlifyDocuments = ['admin-openapi.json', 'discovery-openapi.json', 'analytics.openapi.json', 'openapi.json'] as const;

const readDocument = (file: string) => JSON.parse(readFileSync(path.join(fixtures, file), 'utf8')) as Schema;

/** Resolves local `$ref`s and turns OpenAPI 3.0's `nullable` into JSON Schema's null type, so one validator reads all four. */
function toJsonSchema(s: unknown, doc: Schema): any {
  if (Array.isArray(s)) return s.map((x) => toJsonSchema(x, doc));
  if (!s || typeof s !== 'object') return s;
  const o = s as Schema;
  if (typeof o.$ref === 'string') {
    const target = o.$ref
      .slice(2)
      .split('/')
      .reduce((at: Schema, k: string) => at[k], doc);
    return toJsonSchema(target, doc);
  }
  const out: Schema = {};
  for (const [k, v] of Object.entries(o)) if (k !== 'nullable' && k !== 'example' && k !== 'examples') out[k] = toJsonSchema(v, doc);
  if (o.nullable === true && typeof o.type === 'string') {
    out.type = [o.type, 'null'];
    if (out.enum) out.enum = [...out.enum, null];
  }
  return out;
}

export function mintlifyOperations(): MintlifyOperation[] {
  const ops: MintlifyOperation[] = [];
  for (const file of mintlifyDocuments) {
    const doc = readDocument(file);
    const prefix = new URL((doc.servers?.[0]?.url as string) ?? 'https://x').pathname.replace(/\/$/, '');
    for (const [p, item] of Object.entries(doc.paths as Record<string, Schema>)) {
      for (const [method, op] of Object.entries(item)) {
        if (!['get', 'post'].includes(method)) continue;
        const full = prefix + p;
        const responses: MintlifyOperation['responses'] = {};
        for (const [status, r] of Object.entries((op.responses ?? {}) as Record<string, Schema>)) {
          const resolved = toJsonSchema(r, doc) as Schema;
          responses[status] = {
            contentTypes: Object.fromEntries(Object.entries((resolved.content ?? {}) as Record<string, Schema>).map(([ct, c]) => [ct, c.schema])),
            headers: Object.keys(resolved.headers ?? {}),
          };
        }
        ops.push({
          document: file,
          method: method.toUpperCase() as 'GET' | 'POST',
          path: full,
          name: `${method.toUpperCase()} ${full}`,
          deprecated: op.deprecated === true,
          parameters: ((op.parameters ?? []) as Schema[]).map((x) => {
            const param = toJsonSchema(x, doc) as Schema;
            return { ...(param as MintlifyOperation['parameters'][number]), schema: { ...param.schema, ...(x.schema?.example !== undefined && { example: x.schema.example }) } };
          }),
          requestBody: op.requestBody ? toJsonSchema(op.requestBody.content?.['application/json']?.schema, doc) : undefined,
          responses,
        });
      }
    }
  }
  return ops;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

/**
 * Checks an answer against the operation's documented response: the status is documented (or the document's error
 * statuses, for a refusal), the content type is one it lists and the body matches its schema. Returns what is wrong.
 */
export function checkAnswer(op: MintlifyOperation, status: number, contentType: string | null, body: unknown): string[] {
  const doc = op.responses[String(status)] ?? op.responses[`${String(status)[0]}XX`] ?? op.responses.default;
  if (!doc) return [`${op.name}: status ${status} is not documented (${Object.keys(op.responses).join(', ')})`];
  const types = Object.keys(doc.contentTypes);
  if (types.length === 0) return [];
  const type = (contentType ?? '').split(';')[0]!.trim();
  if (!types.includes(type)) return [`${op.name} ${status}: content type ${contentType} is not one of ${types.join(', ')}`];
  const schema = doc.contentTypes[type];
  if (!schema || type !== 'application/json') return [];
  const validate = ajv.compile(schema);
  return validate(body) ? [] : [`${op.name} ${status}: ${ajv.errorsText(validate.errors)}; body ${JSON.stringify(body).slice(0, 400)}`];
}

/**
 * A value of each kind the schema allows, boundaries included: its documented default first, then every enum member,
 * minimum and maximum, empty and one-item arrays.
 */
function valuesOf(schema: Schema | undefined, depth = 0): unknown[] {
  if (!schema || depth > 4) return ['x'];
  const values = kindsOf(schema, depth);
  if (schema.default === undefined || schema.default === null) return values;
  const seen = JSON.stringify(schema.default);
  return [schema.default, ...values.filter((v) => JSON.stringify(v) !== seen)];
}

function kindsOf(schema: Schema, depth: number): unknown[] {
  if (schema.enum) return schema.enum.filter((v: unknown) => v !== null);
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (alternatives) return alternatives.flatMap((a: Schema) => valuesOf(a, depth + 1).slice(0, 1));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : undefined);
      const max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : undefined);
      const out = [min ?? 1, min ?? 0, max ?? (min ?? 0) + 1_000];
      if (type === 'number') out.push(max === undefined ? (min ?? 0) + 0.5 : ((min ?? 0) + max) / 2);
      return [...new Set(out)];
    }
    case 'boolean':
      return [true, false];
    case 'string':
      if (schema.format === 'date-time') return [new Date().toISOString()];
      if (schema.format === 'date') return [new Date().toISOString().slice(0, 10)];
      return (schema.minLength ?? 0) > 0 ? ['install'] : ['install', ''];
    case 'array':
      return [[], valuesOf(schema.items, depth + 1).slice(0, 1)];
    case 'object':
      return objectsOf(schema, depth + 1);
    default:
      return ['x'];
  }
}

/** Objects the schema allows: only the required properties, then each optional property with each of its values. */
function objectsOf(schema: Schema, depth: number): Schema[] {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const required = (schema.required ?? []) as string[];
  const base = Object.fromEntries(required.map((k) => [k, valuesOf(props[k], depth)[0]]));
  const out: Schema[] = [base];
  for (const [k, s] of Object.entries(props)) for (const v of valuesOf(s, depth)) out.push({ ...base, [k]: v });
  return out;
}

/** Request bodies a client may send by the operation's schema (none when it takes no body). */
export function validBodies(op: MintlifyOperation): unknown[] {
  return op.requestBody ? objectsOf(op.requestBody, 0) : [undefined];
}

/** Query strings a client may send: none, each documented example, and each parameter at each of its values. */
export function validQueries(op: MintlifyOperation): URLSearchParams[] {
  const query = op.parameters.filter((p) => p.in === 'query');
  const examples = Object.fromEntries(query.filter((p) => p.schema.example !== undefined).map((p) => [p.name, String(p.schema.example)]));
  const out = [new URLSearchParams(), new URLSearchParams(examples)];
  for (const p of query) for (const v of valuesOf(p.schema)) if (v !== '' && !Array.isArray(v)) out.push(new URLSearchParams({ [p.name]: String(v) }));
  return [...new Map(out.map((q) => [q.toString(), q])).values()];
}

/** The operation's path with its parameters filled in. */
export function pathOf(op: MintlifyOperation, params: Record<string, string>): string {
  return op.path.replace(/\{(\w+)\}/g, (_, n: string) => {
    if (!(n in params)) throw new Error(`${op.name}: no value for {${n}}`);
    return encodeURIComponent(params[n]!);
  });
}
