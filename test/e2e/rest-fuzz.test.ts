import http from 'node:http';
import fc from 'fast-check';
import type { JobDoc } from '../../src/jobs/job';
import { startGateway, type RunningGateway } from '../support/gateway';

// Property-based fuzzing of every operation /openapi.json describes: malformed and boundary path parameters, query
// strings, Authorization variants, content types and bodies. The seed is fixed so a failure reproduces.
const seed = 20261121;
// A budget for the whole surface, not per operation: at 400 cases each the run's cost grew with every route added
// (33 operations, 13,200 cases; 60 would be 24,000). Each operation gets its share, and never fewer than 150 cases.
const caseBudget = 13_200;
// A fixed budget shared equally by the documented operations (80 today: 165 cases each), at least 100 each.
const minRunsPerOperation = 100;
const deadlineMs = 5_000;

interface Operation {
  method: string;
  path: string;
  hasBody: boolean;
}
interface Answer {
  status: number;
  contentType: string;
  body: string;
}

let gw: RunningGateway;
let operations: Operation[];
const keys: Record<string, string> = {};

beforeAll(async () => {
  gw = await startGateway();
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'proj-a', orgId: 'acme', repository: 'acme/docs', ref: 'main', domain: 'docs.acme.dev', allowedOrigins: ['https://acme.dev'] });
  keys.admin = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'proj-a' })).key;
  keys.assistant = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', projectId: 'proj-a', domain: 'docs.acme.dev' })).key;
  const revoked = await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'proj-a' });
  await gw.deps.keys.revoke(revoked.id);
  keys.revoked = revoked.key;
  const job: JobDoc = {
    _id: 'job_0001', projectId: 'proj-a', status: 'active', source: { repository: 'acme/docs', ref: 'main' }, model: 'm', branch: 'b',
    prLink: null, createdAt: new Date(), updatedAt: new Date(), archivedAt: null, turn: 1, prompts: [], asDraft: false,
  };
  await gw.deps.mongo.db.collection<JobDoc>('jobs').insertOne(job);
  const doc = (await (await fetch(gw.url + '/openapi.json')).json()) as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
  operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, hasBody: !!op.requestBody })));
});
afterAll(() => gw.stop());

/** One raw HTTP/1.1 request, so that paths reach the gateway unnormalized; fails if no answer within the deadline. */
function send(method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Promise<Answer> {
  // Node's client sends a DELETE or OPTIONS body without framing unless told its length.
  if (body !== undefined) headers = { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const url = new URL(gw.url);
    const req = http.request({ host: url.hostname, port: url.port, method, path, headers, signal: AbortSignal.timeout(deadlineMs) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    // The gateway may answer (e.g. 400 for a body over 1 MiB) before it has read the whole body; that answer counts.
    req.on('error', (err) => reject(new Error(`${method} ${path}: ${err.message}`)));
    req.end(body);
  });
}

// Header values may hold any byte HTTP allows: tab, printable ASCII and Latin-1.
const headerChar = fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(0x09)).map((c) => String.fromCharCode(c));
const headerValue = fc.string({ unit: headerChar, maxLength: 300 });

const pathParam = fc.oneof(
  fc.constantFrom('proj-a', 'job_0001', 'docs.acme.dev', 'x', '.', '..', '%', '%zz', '%00', '%2F', '%2e%2e', 'a%2Fb', '-', '_', 'A'.repeat(128), 'A'.repeat(129), 'a'.repeat(5000)),
  fc.string({ maxLength: 80 }).map(encodeURIComponent),
  fc.string({ unit: 'binary', maxLength: 40 }).map(encodeURIComponent),
);

const query = fc.oneof(
  fc.constant(''),
  fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 30 }), { maxKeys: 4 }).map((d) => '?' + new URLSearchParams(d).toString()),
  fc.constantFrom('?', '?&&==', '?a=%', '?status=bogus&limit=-1&cursor=%ff', '?limit=99999999999999999999', `?x=${'y'.repeat(4000)}`, '?__proto__=1&constructor=2'),
);

const authorization = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('', 'Bearer', 'Bearer ', 'bearer', 'Basic dXNlcjpwYXNz', 'Bearer docent_admin_', 'Bearer docent_asst_x', 'Bearer a b', `Bearer ${'k'.repeat(8000)}`),
  fc.constantFrom('admin', 'assistant', 'revoked').map((k) => `Bearer ${keys[k]}`),
  fc.constantFrom('admin', 'assistant').map((k) => `bearer  ${keys[k]}  `),
  headerValue,
  headerValue.map((v) => `Bearer ${v}`),
);

const contentType = fc.oneof(
  fc.constantFrom(undefined, 'application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/problem+json', 'application/jsonx', ''),
  headerValue,
);

const jsonText = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v));
const body = fc.oneof(
  fc.constant(undefined),
  jsonText,
  fc.dictionary(fc.constantFrom('prompt', 'fp', 'messages', 'threadId', 'retrievalPageSize', 'filter', 'context', 'currentPath', 'query', 'pageSize', 'branch', 'model', 'asDraft', 'id', '__proto__'), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }).map((d) => JSON.stringify(d)),
  fc.constantFrom('', '{', '[', 'null', '"', '{"a":', '\u0000', '{}'.repeat(1000), '['.repeat(5000), `"${'x'.repeat(70_000)}"`),
  fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
);

const otherMethod = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD');

function check(op: Operation, method: string, path: string, a: Answer): void {
  const where = `${method} ${path.slice(0, 200)} -> ${a.status} ${a.body.slice(0, 300)}`;
  // /readyz answering 503 is its documented readiness answer, not a failure.
  const readinessAnswer = op.path === '/readyz' && a.status === 503 && (JSON.parse(a.body) as { ready?: boolean }).ready === false;
  if (a.status >= 500 && !readinessAnswer) throw new Error(`server error: ${where}`);
  if (a.status >= 400 && a.status < 500 && method !== 'HEAD') {
    if (!a.contentType.startsWith('application/json')) throw new Error(`error without JSON body: ${where}`);
    const parsed = JSON.parse(a.body) as { error?: unknown; code?: unknown };
    if (typeof parsed.error !== 'string' || typeof parsed.code !== 'string') throw new Error(`error without the error shape: ${where}`);
  }
}

describe('REST fuzzing', () => {
  it('answers every malformed request to every documented operation without 5xx, hangs or a bare error', async () => {
    expect(operations.length).toBeGreaterThan(0);
    let cases = 0;
    const runsPerOperation = Math.max(minRunsPerOperation, Math.floor(caseBudget / operations.length));
    for (const op of operations) {
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            method: fc.oneof({ weight: 4, arbitrary: fc.constant(op.method) }, { weight: 1, arbitrary: otherMethod }),
            params: fc.array(pathParam, { minLength: 4, maxLength: 4 }),
            query,
            authorization,
            contentType,
            origin: fc.constantFrom(undefined, 'https://acme.dev', 'https://evil.example', 'null'),
            body,
          }),
          async (c) => {
            cases++;
            let i = 0;
            const path = op.path.replace(/\{\w+\}/g, () => c.params[i++]!) + c.query;
            const headers: Record<string, string> = {};
            if (c.authorization !== undefined) headers.authorization = c.authorization;
            if (c.contentType !== undefined) headers['content-type'] = c.contentType;
            if (c.origin !== undefined) headers.origin = c.origin;
            const withBody = c.method !== 'GET' && c.method !== 'HEAD' && c.body !== undefined;
            check(op, c.method, path, await send(c.method, path, headers, withBody ? c.body : undefined));
          },
        ),
        { seed, numRuns: runsPerOperation },
      );
    }
    // Bodies just over the 1 MiB cap, once per operation that takes a body (too large to generate per case).
    for (const op of operations.filter((o) => o.hasBody)) {
      cases++;
      const a = await send(op.method, op.path.replace(/\{\w+\}/g, 'proj-a'), { authorization: `Bearer ${keys.admin}`, 'content-type': 'application/json' }, JSON.stringify({ prompt: 'x'.repeat(1024 * 1024) }));
      check(op, op.method, op.path, a);
      expect(a.status).toBe(400);
    }
    console.log(`REST fuzzing: ${cases} cases over ${operations.length} operations (seed ${seed}), no 5xx, no hang, every 4xx in the error shape`);
    // A hang is caught per request (deadlineMs); the whole run's time follows the machine's load.
  }, 300_000);
});
