import { Code, ConnectError, createClient, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { AgentJobStatus, AgentService } from '../../src/gen/agent/v2/agent_pb';
import type { JobDoc } from '../../src/jobs/job';
import { ApiKeyStore } from '../../src/auth/api-keys';
import { startGateway, type RunningGateway } from '../support/gateway';

let gw: RunningGateway;
let adminKey: string;
let otherProjectKey: string;
let assistantKey: string;
const job: JobDoc = {
  _id: 'job_0001',
  projectId: 'proj-a',
  status: 'completed',
  source: { repository: 'acme/docs', ref: 'main' },
  model: 'gpt-test',
  branch: 'docent/job_0001',
  prLink: 'https://github.com/acme/docs/pull/7',
  createdAt: new Date('2026-11-01T10:00:00Z'),
  updatedAt: new Date('2026-11-01T10:05:00Z'),
  archivedAt: null,
  turn: 1,
  prompts: [{ turn: 1, prompt: 'fix the typo', at: new Date('2026-11-01T10:00:00Z') }],
  asDraft: false,
};

beforeAll(async () => {
  gw = await startGateway();
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'proj-a', orgId: 'acme', repository: 'acme/docs', ref: 'main' });
  adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'proj-a' })).key;
  otherProjectKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'proj-b' })).key;
  assistantKey = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain: 'docs.acme.dev' })).key;
  await gw.deps.mongo.db.collection<JobDoc>('jobs').insertOne(job);
});
afterAll(() => gw.stop());

// Response bodies are read as the loose JSON a client sees.
const json = (r: Response): Promise<any> => r.json();
const get = (path: string, key?: string) => fetch(gw.url + path, { headers: key ? { authorization: `Bearer ${key}` } : {} });

describe('health', () => {
  it('is live', async () => {
    const r = await get('/healthz');
    expect(r.status).toBe(200);
    expect(await json(r)).toEqual({ status: 'ok' });
  });

  it('is ready with MongoDB, Elasticsearch and Temporal all reachable', async () => {
    const r = await get('/readyz');
    const body = await json(r);
    expect(r.status).toBe(200);
    expect(body.ready).toBe(true);
    for (const dep of ['mongodb', 'elasticsearch', 'temporal']) expect(body.dependencies[dep].ok).toBe(true);
  });

  it('is not ready, and says which dependency is down, when Elasticsearch is unreachable', async () => {
    const broken = await startGateway({ DOCENT_ES_URL: 'http://127.0.0.1:1' });
    try {
      const r = await fetch(broken.url + '/readyz');
      const body = await json(r);
      expect(r.status).toBe(503);
      expect(body.dependencies.elasticsearch.ok).toBe(false);
      expect(body.dependencies.mongodb.ok).toBe(true);
      expect(JSON.stringify(body)).not.toContain('127.0.0.1:1');
    } finally {
      await broken.stop();
    }
  });
});

describe('REST', () => {
  it('returns a job of the key’s project in the documented shape', async () => {
    const r = await get('/v2/agent/proj-a/job/job_0001', adminKey);
    expect(r.status).toBe(200);
    expect(await json(r)).toEqual({
      id: 'job_0001',
      status: 'completed',
      // As Mintlify gives it over REST: the repository's URL and the branch worked on; docent's values beside them.
      source: { repository: 'https://github.com/acme/docs', ref: 'docent/job_0001', name: 'acme/docs', baseRef: 'main' },
      model: 'gpt-test',
      prLink: 'https://github.com/acme/docs/pull/7',
      createdAt: '2026-11-01T10:00:00.000Z',
      archivedAt: null,
      updatedAt: '2026-11-01T10:05:00.000Z',
      branch: 'docent/job_0001',
      turn: 1,
      // A job whose project runs no checks.
      checks: [],
      checksPassed: null,
      // Written before turns were recorded: none to show.
      turns: [],
      // Stored before origins were: every such job came from an API call.
      origin: 'api',
      instruction: 'fix the typo',
      // Stored before forge connections were: the deployment's credential.
      forgeId: 'deployment',
    });
  });

  it.each([
    ['no key', undefined, 401, 'unauthenticated'],
    ['an unknown key', 'docent_admin_nope', 401, 'unauthenticated'],
    ['an assistant key', 'ASSISTANT', 403, 'permission_denied'],
    ['another project’s key', 'OTHER', 404, 'not_found'],
  ])('refuses %s with the error shape', async (_, key, status, code) => {
    const k = key === 'ASSISTANT' ? assistantKey : key === 'OTHER' ? otherProjectKey : key;
    const r = await get('/v2/agent/proj-a/job/job_0001', k);
    expect(r.status).toBe(status);
    const body = await json(r);
    expect(body.code).toBe(code);
    expect(typeof body.error).toBe('string');
    expect(JSON.stringify(body)).not.toContain('job_0001');
  });

  it('answers 404 for an unknown job and an unknown path', async () => {
    expect((await get('/v2/agent/proj-a/job/job_9999', adminKey)).status).toBe(404);
    const r = await get('/no/such/path');
    expect(r.status).toBe(404);
    expect((await json(r)).code).toBe('not_found');
  });

  it('answers 405 with Allow for a known path and the wrong method', async () => {
    const r = await fetch(gw.url + '/healthz', { method: 'POST' });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET, OPTIONS'); // OPTIONS is answered on every path (CORS preflight)
  });
});

describe('Connect, gRPC and gRPC-web', () => {
  const transports: Array<[string, () => Transport]> = [
    ['Connect over HTTP/1.1', () => createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' })],
    ['gRPC over h2c', () => createGrpcTransport({ baseUrl: gw.h2Url })],
    ['gRPC-web over HTTP/1.1', () => createGrpcWebTransport({ baseUrl: gw.url, httpVersion: '1.1' })],
  ];

  it.each(transports)('%s: GetAgentJob returns the job', async (_, transport) => {
    const client = createClient(AgentService, transport());
    const res = await client.getAgentJob({ projectId: 'proj-a', jobId: 'job_0001' }, { headers: { authorization: `Bearer ${adminKey}` } });
    expect(res.job?.status).toBe(AgentJobStatus.COMPLETED);
    expect(res.job?.prLink).toBe('https://github.com/acme/docs/pull/7');
    expect(res.job?.createdAt?.seconds).toBe(BigInt(Date.parse('2026-11-01T10:00:00Z') / 1000));
  });

  it.each(transports)('%s: errors carry the same code as REST', async (_, transport) => {
    const client = createClient(AgentService, transport());
    const call = (key?: string) => client.getAgentJob({ projectId: 'proj-a', jobId: 'job_0001' }, { headers: key ? { authorization: `Bearer ${key}` } : {} });
    await expect(call()).rejects.toMatchObject({ code: Code.Unauthenticated });
    await expect(call(otherProjectKey)).rejects.toMatchObject({ code: Code.NotFound });
    const err = await call(assistantKey).catch((e: unknown) => ConnectError.from(e));
    expect(err).toMatchObject({ code: Code.PermissionDenied });
  });
});

describe('API keys', () => {
  it('are stored only as hashes', async () => {
    const docs = await gw.deps.mongo.db.collection('api_keys').find().toArray();
    const stored = JSON.stringify(docs);
    for (const key of [adminKey, otherProjectKey, assistantKey]) expect(stored).not.toContain(key);
  });

  it('stop working once revoked', async () => {
    const { id, key } = await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'proj-a' });
    expect((await get('/v2/agent/proj-a/job/job_0001', key)).status).toBe(200);
    expect(await gw.deps.keys.revoke(id)).toBe(true);
    expect((await get('/v2/agent/proj-a/job/job_0001', key)).status).toBe(401);
  });

  it('stop working within DOCENT_LOOKUP_CACHE_MS (1 s) when another process revokes them, and stay refused', async () => {
    const { id, key } = await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'proj-a' });
    expect((await get('/v2/agent/proj-a/job/job_0001', key)).status).toBe(200); // read and cached by the gateway
    // The CLI's store: its own client, no cache, and nothing it does reaches the gateway's memory.
    const cli = new ApiKeyStore(gw.deps.mongo.db);
    expect(await cli.revoke(id)).toBe(true);
    const revokedAt = performance.now();
    const statuses: Array<{ ms: number; status: number }> = [];
    // Asked until refused, then a few times more: once refused, a revoked key is never admitted again.
    while (statuses.filter((s) => s.status === 401).length < 5) {
      if (performance.now() - revokedAt > 30_000) throw new Error(`still admitted 30 s after revocation: ${JSON.stringify(statuses.slice(-3))}`);
      statuses.push({ ms: performance.now() - revokedAt, status: (await get('/v2/agent/proj-a/job/job_0001', key)).status });
      await new Promise((r) => setTimeout(r, 25));
    }
    const firstRefusal = statuses.findIndex((s) => s.status === 401);
    expect(statuses.slice(firstRefusal).every((s) => s.status === 401)).toBe(true);
    // Refused once the cached lookup (1 s) ran out, not by some later clean-up: the first refusal, with room for a
    // loaded machine, comes well before the 30 s this test waits at most.
    expect(statuses[firstRefusal]!.ms).toBeLessThan(1_000 + 5_000);
  });

  it('are never confused with a cached key that differs by one character, and expire on time while cached', async () => {
    const expiresAt = new Date(Date.now() + 600);
    const { key } = await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'proj-a', expiresAt });
    expect((await get('/v2/agent/proj-a/job/job_0001', key)).status).toBe(200);
    const last = key.at(-1) === 'A' ? 'B' : 'A';
    expect((await get('/v2/agent/proj-a/job/job_0001', key.slice(0, -1) + last)).status).toBe(401);
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt.getTime() - Date.now() + 10)));
    expect((await get('/v2/agent/proj-a/job/job_0001', key)).status).toBe(401);
  });
});
