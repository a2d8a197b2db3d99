import type { JobDoc } from '../../src/jobs/job';
import { restRoutes } from '../../src/rest/routes';
import { startGateway, type RunningGateway } from '../support/gateway';
import { v2Body } from '../support/http';
import { startScriptedModel, type ScriptedModel, modelSettings } from '../support/scripted-model';

// Every authenticated REST route, with every kind of bad credential: the documented status, the error shape,
// nothing created and no quota used.

let gw: RunningGateway;
let model: ScriptedModel;
const keys: Record<string, string> = {};

// A valid body per route, so that only the credential decides the answer.
const bodies: Record<string, unknown> = {
  'POST /v2/agent/{projectId}/job': { prompt: 'fix the typo' },
  'POST /v1/agent/{projectId}/job': { messages: [{ role: 'user', content: 'fix the typo' }] },
  'POST /v1/project/preview/{projectId}': { branch: 'main' },
  'POST /v2/agent/{projectId}/job/{jobId}/message': { prompt: 'and the other one' },
  'POST /discovery/v2/assistant/{domain}/message': v2Body('how do I install?'),
  'POST /discovery/v1/assistant/{domain}/message': { fp: 'anonymous', messages: [{ role: 'user', content: 'how do I install?' }] },
  'POST /discovery/v1/search/{domain}': { query: 'install' },
  'POST /discovery/v1/search/{domain}/results': { query: 'install' },
  'POST /discovery/v1/search/{domain}/click': { searchId: 'srch_x', path: 'index' },
  'POST /discovery/v1/page/{domain}': { path: 'index' },
  'POST /discovery/v1/assistant/{domain}/feedback': { threadId: 'thr_x', rating: 'up' },
  'POST /mcp/{domain}': { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  'POST /v2/agent/{projectId}/gaps/fix': {},
  'POST /v2/agent/{projectId}/webhooks': { url: 'https://hooks.example.com/docent' },
  'POST /v2/agent/{projectId}/webhooks/{webhookId}/redeliver': { messageId: 'msg_0001' },
  'POST /v2/agent/{projectId}/automations': { name: 'nightly', trigger: { type: 'manual' }, instruction: 'fix the typo', output: 'pull_request' },
  'PATCH /v2/agent/{projectId}/automations/{automationId}': { name: 'renamed' },
};

beforeAll(async () => {
  model = await startScriptedModel(() => ({ text: 'never asked' }));
  gw = await startGateway({ ...modelSettings(model) });
  const t = gw.deps.tenancy;
  await t.createOrg('acme');
  await t.createProject({ _id: 'proj-a', orgId: 'acme', repository: 'acme/a', ref: 'main', domain: 'docs.a.test' });
  await t.createProject({ _id: 'proj-b', orgId: 'acme', repository: 'acme/b', ref: 'main', domain: 'docs.b.test' });
  const make = async (kind: 'admin' | 'assistant', project: 'a' | 'b') =>
    (await gw.deps.keys.create({ kind, orgId: 'acme', projectId: `proj-${project}`, ...(kind === 'assistant' ? { domain: `docs.${project}.test` } : {}) })).key;
  keys.admin = await make('admin', 'a');
  keys.assistant = await make('assistant', 'a');
  keys.otherAdmin = await make('admin', 'b');
  keys.otherAssistant = await make('assistant', 'b');
  for (const kind of ['admin', 'assistant'] as const) {
    const revoked = await gw.deps.keys.create({ kind, orgId: 'acme', projectId: 'proj-a', ...(kind === 'assistant' ? { domain: 'docs.a.test' } : {}) });
    await gw.deps.keys.revoke(revoked.id);
    keys[`revoked-${kind}`] = revoked.key;
  }
  const job: JobDoc = {
    _id: 'job_0001', projectId: 'proj-a', status: 'completed', source: { repository: 'acme/a', ref: 'main' }, model: 'm', branch: 'docent/job_0001',
    prLink: null, createdAt: new Date(), updatedAt: new Date(), archivedAt: null, turn: 1, prompts: [], asDraft: false,
  };
  await gw.deps.mongo.db.collection<JobDoc>('jobs').insertOne(job);
  // Operator keys: for every organization, for acme (whose projects these are), and for another organization.
  await t.createOrg('globex');
  keys.operator = (await gw.deps.keys.create({ kind: 'operator', orgId: '*' })).key;
  keys.acmeOperator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'acme' })).key;
  keys.otherOperator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'globex' })).key;
});
afterAll(async () => {
  await gw.stop();
  await model.close();
});

const counts = async () => {
  const db = gw.deps.mongo.db;
  return {
    jobs: await db.collection('jobs').countDocuments(),
    threads: await db.collection('threads').countDocuments(),
    quota: await db.collection('rate_limit_slots').countDocuments(),
    job: await db.collection('jobs').findOne({ _id: 'job_0001' as never }),
  };
};

describe('credentials on every authenticated route', () => {
  it('answer the documented status with the error shape, create nothing and use no quota', async () => {
    // Project keys only: the operator's tokens (codec, metrics) have their own tests.
    const routes = restRoutes(gw.deps).filter((r) => r.auth === 'admin' || r.auth === 'assistant');
    expect(routes.length).toBeGreaterThanOrEqual(8);
    const before = await counts();
    const checked: string[] = [];
    for (const r of routes) {
      const name = `${r.method} ${r.path}`;
      const path = r.path.replace('{projectId}', 'proj-a').replace('{jobId}', 'job_0001').replace('{domain}', 'docs.a.test').replace('{webhookId}', 'wh_0001').replace('{automationId}', 'aut_0001').replace('{workflowSchemaId}', 'aut_0001').replace('{id}', 'job_0001').replace('{threadId}', 'thr_0001').replace('{statusId}', 'upd_0001');
      const right = r.auth; // 'admin' or 'assistant'
      const wrong = right === 'admin' ? 'assistant' : 'admin';
      const cases: Array<[string, string | undefined, number, string]> = [
        ['no key', undefined, 401, 'unauthenticated'],
        ['a malformed header', 'Basic dXNlcjpwYXNz', 401, 'unauthenticated'],
        ['an unknown key', `Bearer docent_${right === 'admin' ? 'admin' : 'asst'}_unknown`, 401, 'unauthenticated'],
        ['the wrong kind of key', `Bearer ${keys[wrong]}`, 403, 'permission_denied'],
        ['a revoked key', `Bearer ${keys[`revoked-${right}`]}`, 401, 'unauthenticated'],
        ['another project’s key', `Bearer ${keys[right === 'admin' ? 'otherAdmin' : 'otherAssistant']}`, 404, 'not_found'],
        // An operator key is a project's admin only where its organization is the project's, on a path naming the
        // project (elsewhere it names none, e.g. Mintlify's update status); never a reader.
        right === 'admin' && r.path.includes('{projectId}')
          ? ['an operator key of another organization', `Bearer ${keys.otherOperator}`, 404, 'not_found']
          : ['an operator key', `Bearer ${keys.operator}`, 403, 'permission_denied'],
      ];
      for (const [what, authorization, status, code] of cases) {
        const body = bodies[name];
        const res = await fetch(gw.url + path, {
          method: r.method,
          headers: { ...(authorization ? { authorization } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        const json = (await res.json()) as { error?: unknown; code?: unknown };
        expect({ route: name, what, status: res.status, code: json.code }).toEqual({ route: name, what, status, code });
        expect(typeof json.error).toBe('string');
        checked.push(`${name}: ${what}`);
      }
    }
    expect(await counts()).toEqual(before);
    expect(model.requests).toEqual([]);
    expect(checked.length).toBe(routes.length * 7);
  });

  it("an operator key covering the project acts as its admin on the project's public routes, as its console session does", async () => {
    const read = (key: string, path: string) => fetch(gw.url + path, { headers: { authorization: `Bearer ${key}` } });
    for (const key of [keys.operator!, keys.acmeOperator!]) {
      const jobs = await read(key, '/v2/agent/proj-a/jobs');
      expect(jobs.status).toBe(200);
      expect(((await jobs.json()) as { jobs: Array<{ id: string }> }).jobs.map((j) => j.id)).toEqual(['job_0001']);
      expect((await read(key, '/v2/agent/proj-a/job/job_0001')).status).toBe(200);
      expect((await read(key, '/v1/analytics/proj-a/searches')).status).toBe(200);
      expect((await read(key, '/v2/agent/proj-a/webhooks')).status).toBe(200);
    }
    // A project that does not exist is 404 as for an admin key, also for an operator key of every organization.
    expect((await read(keys.operator!, '/v2/agent/proj-nowhere/jobs')).status).toBe(404);
    // It acts as the project's admin on state-changing routes too: the job it archives is archived for the admin key.
    const archived = await fetch(`${gw.url}/v2/agent/proj-a/job/job_0001/archive`, { method: 'POST', headers: { authorization: `Bearer ${keys.acmeOperator}` } });
    expect(archived.status).toBe(200);
    expect(((await (await read(keys.admin!, '/v2/agent/proj-a/job/job_0001')).json()) as { archivedAt: string | null }).archivedAt).toEqual(expect.any(String));
  });
});
