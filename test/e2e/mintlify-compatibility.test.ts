import { testConfig } from '../support/config';
import { deleteTestIndexes, ingestMiniDocs, sameStack } from '../support/docs';
import { kilnDocsProjects } from '../support/docs-projects';
import { startGateway, type RunningGateway } from '../support/gateway';
import { terminateJobWorkflows } from '../support/workerless-jobs';
import { type ScriptedModel, modelSettings, startScriptedModel } from '../support/scripted-model';
import { checkAnswer, type MintlifyOperation, mintlifyOperations, pathOf, validBodies, validQueries } from '../support/mintlify-openapi';

// A client generated from Mintlify's own OpenAPI documents (test/fixtures/mintlify/), against the real gateway: every
// operation docent serves is called with each documented example and with requests its schema allows, and every
// answer must be one the document describes (status, content type, body), never a 5xx. No worker runs: the agent jobs
// the calls start wait in Temporal, where the suite ends them.

const config = testConfig();
const domain = 'docs.kiln.test';
let gw: RunningGateway;
let model: ScriptedModel;
let keys: { asst: string; admin: string; otherAdmin: string };
/** The agent project `widgets` (org acme): its admin key and an automation of it. */
let widgets: { admin: string; automationId: string; jobId: string };

/**
 * The Mintlify operations docent serves: the path values and key a call needs, bodies naming things that exist, and
 * the schema-valid requests docent refuses on purpose (docs/api.md, "Mintlify compatibility", says which and why).
 */
const served: Record<string, { params: () => Record<string, string>; key: () => string; bodies?: unknown[]; refuses?: (body: any) => boolean }> = {
  'POST /discovery/v1/search/{domain}': { params: () => ({ domain }), key: () => keys.asst },
  // A path that names no page is Mintlify's documented 404.
  'POST /discovery/v1/page/{domain}': { params: () => ({ domain }), key: () => keys.asst, bodies: [{ path: 'index' }, { path: 'index', groups: [] }], refuses: (b) => b.path !== 'index' },
  'POST /v1/workflow/{projectId}/{workflowSchemaId}/trigger': { params: () => ({ projectId: 'widgets', workflowSchemaId: widgets.automationId }), key: () => widgets.admin },
  // An instruction is required (the seed's rule): no message with text is no instruction.
  'POST /v1/agent/{projectId}/job': { params: () => ({ projectId: 'widgets' }), key: () => widgets.admin, refuses: (b) => b.messages.length === 0 },
  'GET /v1/agent/{projectId}/job/{id}': { params: () => ({ projectId: 'widgets', id: widgets.jobId }), key: () => widgets.admin },
  'GET /v1/agent/{projectId}/jobs': { params: () => ({ projectId: 'widgets' }), key: () => widgets.admin },
  'POST /v2/agent/{projectId}/job': { params: () => ({ projectId: 'widgets' }), key: () => widgets.admin },
  'GET /v2/agent/{projectId}/job/{id}': { params: () => ({ projectId: 'widgets', id: widgets.jobId }), key: () => widgets.admin },
  'POST /v2/agent/{projectId}/job/{id}/message': { params: () => ({ projectId: 'widgets', id: widgets.jobId }), key: () => widgets.admin },
};

const operations = mintlifyOperations();

beforeAll(async () => {
  await ingestMiniDocs(config, domain);
  model = await startScriptedModel(() => ({ text: 'not used: no worker runs in this suite' }));
  gw = await startGateway(sameStack(config, { ...modelSettings(model), DOCENT_AUTOMATION_RUNS_PER_DAY: '1000' }));
  keys = await kilnDocsProjects(gw, domain);
  await gw.deps.tenancy.createProject({ _id: 'widgets', orgId: 'acme', repository: 'acme/widgets', ref: 'main' });
  const admin = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'widgets' })).key;
  const job = await fetch(`${gw.url}/v2/agent/widgets/job`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'add a note to the README' }),
  });
  expect(job.status).toBe(201);
  widgets = { admin, automationId: (await createAutomation(admin, 'nightly notes')).id, jobId: ((await job.json()) as { id: string }).id };
});
afterAll(async () => {
  await deleteTestIndexes(config);
  if (gw) await terminateJobWorkflows(gw);
  await gw?.stop();
  await model?.close();
});

async function createAutomation(admin: string, name: string): Promise<{ id: string }> {
  const r = await fetch(`${gw.url}/v2/agent/widgets/automations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, trigger: { type: 'schedule', cron: '0 3 * * *', timeZone: 'UTC' }, instruction: 'add a note', output: 'pull_request' }),
  });
  expect(r.status).toBe(201);
  return (await r.json()) as { id: string };
}

async function call(op: MintlifyOperation, query: URLSearchParams, body: unknown) {
  const s = served[op.name]!;
  const qs = query.toString();
  const res = await fetch(`${gw.url}${pathOf(op, s.params())}${qs ? `?${qs}` : ''}`, {
    method: op.method,
    headers: { authorization: `Bearer ${s.key()}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const type = res.headers.get('content-type');
  // A stream runs as long as its job does (no worker here): its first event is enough to see that it streams.
  const text = type?.startsWith('text/event-stream') ? await firstEvent(res) : await res.text();
  return { status: res.status, type, headers: res.headers, body: type?.startsWith('application/json') ? JSON.parse(text) : text };
}

async function firstEvent(res: Response): Promise<string> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  while (!/\ndata: .*\n\n/.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  await reader.cancel();
  return text;
}

describe("Mintlify's documents against the gateway", () => {
  it('names only operations that exist in the documents', () => {
    const names = new Set(operations.map((o) => o.name));
    for (const name of Object.keys(served)) expect(names).toContain(name);
  });

  it('are described by GET /openapi.json, each served operation at its path and method', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    // Parameter names may differ ({jobId} for Mintlify's {id}); a client only fills them in.
    const shape = (name: string) => name.replace(/\{\w+\}/g, '{}');
    const described = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => shape(`${m.toUpperCase()} ${p}`)));
    expect(described).toEqual(expect.arrayContaining(Object.keys(served).map(shape)));
  });

  for (const op of operations.filter((o) => o.name in served)) {
    it(`${op.name}: every schema-valid request gets a documented answer`, async () => {
      const problems: string[] = [];
      const statuses = new Set<number>();
      for (const query of validQueries(op)) {
        for (const body of [...validBodies(op), ...(served[op.name]!.bodies ?? [])]) {
          const r = await call(op, query, body);
          statuses.add(r.status);
          const asked = `${query.toString() || '(no query)'} ${JSON.stringify(body) ?? ''}`;
          if (r.status >= 500) problems.push(`${op.name} ${asked}: ${r.status} ${JSON.stringify(r.body)}`);
          const refused = served[op.name]!.refuses?.(body) ?? false;
          if (refused !== r.status >= 400) problems.push(`${op.name} ${asked}: ${r.status} where docent ${refused ? 'refuses' : 'serves'} it: ${JSON.stringify(r.body).slice(0, 300)}`);
          // A refusal Mintlify does not document still carries its error field, which generated clients read.
          if (refused && !op.responses[String(r.status)]) expect(r.body).toMatchObject({ error: expect.any(String) });
          else for (const p of checkAnswer(op, r.status, r.type, r.body)) problems.push(`${p} (asked ${asked})`);
          for (const h of op.responses[String(r.status)]?.headers ?? []) if (!r.headers.has(h)) problems.push(`${op.name} ${r.status}: no ${h} header`);
        }
      }
      expect(problems).toEqual([]);
      // A run that never succeeded checked nothing of the success schema.
      expect([...statuses].some((s) => s >= 200 && s < 300)).toBe(true);
    });
  }
});

const post = (path: string, body: unknown, key = keys.asst) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('search: Mintlify’s array on its path, docent’s {results, searchId} on …/results', () => {
  it('answers the passages best first as {content, path, metadata}, with the search id in a header the click report takes', async () => {
    const r = await post(`/discovery/v1/search/${domain}`, { query: 'install kiln', pageSize: 3 });
    expect(r.status).toBe(200);
    const hits = (await r.json()) as Array<{ content: string; path: string; metadata: { title: string; url: string; headings: string[]; score: number } }>;
    expect(Array.isArray(hits)).toBe(true);
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.length).toBeLessThanOrEqual(3);
    expect(hits[0]).toEqual({
      content: expect.any(String),
      path: expect.any(String),
      metadata: { title: expect.any(String), url: expect.stringMatching(/^https:\/\/kiln\.example/), headings: expect.any(Array), score: 1 },
    });
    const searchId = r.headers.get('x-search-id');
    expect(searchId).toMatch(/^srch_/);
    expect((await post(`/discovery/v1/search/${domain}/click`, { searchId, path: hits[0]!.path })).status).toBe(204);
  });

  it('gives the same passages in docent’s shape at …/results', async () => {
    const mintlify = (await (await post(`/discovery/v1/search/${domain}`, { query: 'install kiln' })).json()) as Array<{ path: string; content: string }>;
    const r = await post(`/discovery/v1/search/${domain}/results`, { query: 'install kiln' });
    const docent = (await r.json()) as { results: Array<{ path: string; content: string; title: string; score: number }>; searchId: string };
    expect(docent.searchId).toMatch(/^srch_/);
    expect(docent.results.map((p) => [p.path, p.content])).toEqual(mintlify.map((p) => [p.path, p.content]));
  });

  it('finds nothing for an empty query on Mintlify’s path, where docent’s own path refuses it', async () => {
    const r = await post(`/discovery/v1/search/${domain}`, { query: '   ' });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual([]);
    expect((await post(`/discovery/v1/search/${domain}/results`, { query: '   ' })).status).toBe(400);
  });
});

describe('page: Mintlify’s 404 body', () => {
  it('says why in `message` (and docent’s error and code) for an unknown or empty path', async () => {
    for (const path of ['no/such/page', '']) {
      const r = await post(`/discovery/v1/page/${domain}`, { path });
      expect(r.status).toBe(404);
      const body = (await r.json()) as { error: string };
      expect(body).toEqual({ error: expect.stringContaining('no page'), code: 'not_found', message: body.error });
    }
  });
});

describe('automation trigger: Mintlify’s POST /v1/workflow/{projectId}/{workflowSchemaId}/trigger', () => {
  const trigger = (id: string, key = widgets.admin) => fetch(`${gw.url}/v1/workflow/widgets/${id}/trigger`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
  const getJson = async (path: string) => (await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${widgets.admin}` } })).json();

  it('queues a run of the automation: 202 {schemaId, instanceId, jobId}, the run among its runs and the job started by it', async () => {
    const r = await trigger(widgets.automationId);
    expect(r.status).toBe(202);
    const body = (await r.json()) as { schemaId: string; instanceId: string; jobId: string };
    expect(body).toEqual({ schemaId: widgets.automationId, instanceId: expect.any(String), jobId: expect.any(String) });
    const { runs } = (await getJson(`/v2/agent/widgets/automations/${widgets.automationId}/runs`)) as { runs: Array<{ id: string; jobId: string }> };
    expect(runs).toContainEqual(expect.objectContaining({ id: body.instanceId, jobId: body.jobId }));
    expect(await getJson(`/v2/agent/widgets/job/${body.jobId}`)).toMatchObject({ id: body.jobId, automationId: widgets.automationId, origin: 'automation_manual', status: 'active' });
  });

  it('is 400 {error} for a paused automation and 404 {error} for an unknown one or another project’s key', async () => {
    const paused = await createAutomation(widgets.admin, 'paused one');
    expect((await fetch(`${gw.url}/v2/agent/widgets/automations/${paused.id}/pause`, { method: 'POST', headers: { authorization: `Bearer ${widgets.admin}` } })).status).toBe(200);
    const refused = await trigger(paused.id);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: expect.stringContaining('paused') });
    for (const r of [await trigger('aut_nope'), await trigger(widgets.automationId, keys.otherAdmin)]) {
      expect(r.status).toBe(404);
      expect(await r.json()).toMatchObject({ error: expect.any(String) });
    }
  });
});
