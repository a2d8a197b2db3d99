import { testConfig } from '../support/config';
import { deleteTestIndexes, ingestMiniDocs, sameStack } from '../support/docs';
import { kilnDocsProjects } from '../support/docs-projects';
import { startGateway, type RunningGateway } from '../support/gateway';
import { poll } from '../support/poll';
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

/** Mintlify documents 400 for these: a date that is not one, and a cursor docent never handed out. */
const notADateOrCursor = (_body: unknown, q: URLSearchParams) => ['dateFrom', 'dateTo'].some((d) => q.has(d) && !/^\d{4}-\d{2}-\d{2}/.test(q.get(d)!)) || (q.has('cursor') && q.get('cursor') !== '');

/** docent answers a conversation whose last message is the user's, with text, from a named `fp` (the seed's rules); others are 400. */
function endsWithAQuestion(b: { messages?: Array<{ role?: string; content?: string; parts?: Array<{ type?: string; text?: string }> }> }): boolean {
  const last = b.messages?.at(-1);
  if (last?.role !== 'user') return false;
  const text =
    typeof last.content === 'string' && last.content.trim()
      ? last.content
      : (last.parts ?? [])
          .filter((p) => p.type === 'text')
          .map((p) => p.text ?? '')
          .join('');
  return text.trim() !== '';
}

/** A question asked (and rated) through the gateway, so the analytics have something to report. */
let asked: { threadId: string };

/**
 * The Mintlify operations docent serves: the path values and key a call needs, bodies naming things that exist, and
 * the schema-valid requests docent refuses on purpose (docs/api.md, "Mintlify compatibility", says which and why).
 */
const served: Record<string, { params: () => Record<string, string>; key: () => string; bodies?: unknown[]; refuses?: (body: any, query: URLSearchParams) => boolean; streams?: string }> = {
  // Mintlify's document lists application/json for what its own text calls the useChat stream; docent sends the
  // stream each AI SDK client reads (docs/assistant.md), so that content type is checked instead.
  'POST /discovery/v2/assistant/{domain}/message': { params: () => ({ domain }), key: () => keys.asst, refuses: (b) => !b.fp?.trim() || !endsWithAQuestion(b), streams: 'text/event-stream' },
  'POST /discovery/v1/assistant/{domain}/message': { params: () => ({ domain }), key: () => keys.asst, refuses: (b) => !b.fp?.trim() || !endsWithAQuestion(b), streams: 'text/plain' },
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
  ...Object.fromEntries(
    ['feedback', 'feedback/by-page', 'assistant', 'assistant/caller-stats', 'searches', 'views', 'visitors'].map((p) => [
      `GET /v1/analytics/{projectId}/${p}`,
      { params: () => ({ projectId: 'kiln' }), key: () => keys.admin, refuses: notADateOrCursor },
    ]),
  ),
  'GET /v1/analytics/{projectId}/assistant/threads/{threadId}': { params: () => ({ projectId: 'kiln', threadId: asked.threadId }), key: () => keys.admin },
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
  asked = { threadId: await askAndRate('How do I install kiln?') };
  widgets = { admin, automationId: (await createAutomation(admin, 'nightly notes')).id, jobId: ((await job.json()) as { id: string }).id };
});
afterAll(async () => {
  await deleteTestIndexes(config);
  if (gw) await terminateJobWorkflows(gw);
  await gw?.stop();
  await model?.close();
});

async function askAndRate(question: string): Promise<string> {
  const headers = { authorization: `Bearer ${keys.asst}`, 'content-type': 'application/json' };
  const r = await fetch(`${gw.url}/discovery/v2/assistant/${domain}/message`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ fp: 'anonymous', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: question }] }], currentPath: '/guides/install' }),
  });
  await r.text();
  const threadId = r.headers.get('x-thread-id')!;
  const rated = await fetch(`${gw.url}/discovery/v1/assistant/${domain}/feedback`, { method: 'POST', headers, body: JSON.stringify({ threadId, rating: 'up', comment: 'clear' }) });
  expect(rated.status).toBe(204);
  await fetch(`${gw.url}/discovery/v1/search/${domain}`, { method: 'POST', headers, body: JSON.stringify({ query: question }) });
  return threadId;
}

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
  const text = type?.startsWith('text/event-stream') && op.path.startsWith('/v1/agent') ? await firstEvent(res) : await res.text();
  return { status: res.status, type, headers: res.headers, body: type?.startsWith('application/json') ? JSON.parse(text) : text };
}

/** The operation with its success answer documented as the stream docent sends. */
const withStream = (op: MintlifyOperation, type: string | undefined): MintlifyOperation =>
  type ? { ...op, responses: { ...op.responses, 200: { contentTypes: { [type]: undefined }, headers: [] } } } : op;

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
  it('covers every operation of the four documents (the deploys in test/e2e/mintlify-deploy.test.ts, with a worker)', () => {
    const deploys = operations.filter((o) => o.path.startsWith('/v1/project/')).map((o) => o.name);
    expect([...Object.keys(served), ...deploys].sort()).toEqual(operations.map((o) => o.name).sort());
  });

  it('are described by GET /openapi.json, each operation at its path and method', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    // Parameter names may differ ({jobId} for Mintlify's {id}); a client only fills them in.
    const shape = (name: string) => name.replace(/\{\w+\}/g, '{}');
    const described = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => shape(`${m.toUpperCase()} ${p}`)));
    expect(described).toEqual(expect.arrayContaining(operations.map((o) => shape(o.name))));
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
          const refused = served[op.name]!.refuses?.(body, query) ?? false;
          if (refused !== r.status >= 400) problems.push(`${op.name} ${asked}: ${r.status} where docent ${refused ? 'refuses' : 'serves'} it: ${JSON.stringify(r.body).slice(0, 300)}`);
          // A refusal Mintlify does not document still carries its error field, which generated clients read.
          if (refused && !op.responses[String(r.status)]) expect(r.body).toMatchObject({ error: expect.any(String) });
          else for (const p of checkAnswer(withStream(op, served[op.name]!.streams), r.status, r.type, r.body)) problems.push(`${p} (asked ${asked})`);
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

describe('analytics at Mintlify’s paths, with dateFrom/dateTo (dateTo exclusive)', () => {
  const read = async (path: string) => {
    const r = await fetch(`${gw.url}/v1/analytics/kiln/${path}`, { headers: { authorization: `Bearer ${keys.admin}` } });
    return { status: r.status, clamped: r.headers.get('x-docent-clamped'), body: (await r.json()) as any };
  };
  const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

  it('lists each question as a flat row, pages them with the cursor, and opens its thread', async () => {
    const second = await askAndRate('How do I bake my site with kiln?');
    const { body } = await read('assistant');
    const row = body.conversations.find((c: { threadId: string }) => c.threadId === asked.threadId);
    expect(row).toMatchObject({ query: 'How do I install kiln?', responseType: 'answer', resolutionStatus: 'answered', queryCategory: null, pageUrl: '/guides/install' });
    expect(row.sources.length).toBeGreaterThan(0);
    const first = await read('assistant?limit=1');
    expect(first.body).toMatchObject({ conversations: [{ threadId: second }], hasMore: true, nextCursor: expect.any(String) });
    const next = await read(`assistant?limit=1&cursor=${first.body.nextCursor}`);
    expect(next.body.conversations[0].threadId).not.toBe(second);
    const thread = await read(`assistant/threads/${asked.threadId}`);
    expect(thread.body).toEqual({
      threadId: asked.threadId,
      createdAt: expect.any(String),
      messages: [
        { id: expect.any(String), role: 'user', content: 'How do I install kiln?', createdAt: expect.any(String) },
        { id: expect.any(String), role: 'assistant', content: row.response, createdAt: expect.any(String) },
      ],
    });
    const missing = await read('assistant/threads/thr_nope');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: expect.any(String) });
  });

  it('clamps what Mintlify accepts beyond docent’s bounds and says so', async () => {
    const many = await read('assistant?limit=500');
    expect(many.status).toBe(200);
    expect(many.clamped).toBe('limit=100');
    const fraction = await read('searches?limit=2.5');
    expect(fraction.clamped).toBe('limit=2');
    expect(fraction.body.searches.length).toBeLessThanOrEqual(2);
    const twoYears = await read(`searches?dateFrom=${day(-800)}&dateTo=${day(1)}`);
    expect(twoYears.clamped).toMatch(/^dateFrom=/);
    expect(await read('searches?limit=0')).toMatchObject({ status: 400, body: { error: expect.any(String) } });
    expect(await read(`searches?dateFrom=${day(1)}&dateTo=${day(0)}`)).toMatchObject({ status: 400 });
  });

  it('counts searches up to but not on dateTo', async () => {
    const row = (b: any) => b.searches.find((s: { searchQuery: string }) => s.searchQuery === 'How do I install kiln?');
    const searched = row((await read('searches')).body);
    expect(searched).toMatchObject({ hits: expect.any(Number), ctr: 0, topClickedPage: null });
    // The day the search was made, and the next: dateTo on that day leaves it out, the next day's takes it in.
    const on = searched.lastSearchedAt.slice(0, 10) as string;
    const next = new Date(Date.parse(on) + 86_400_000).toISOString().slice(0, 10);
    const including = await read(`searches?dateFrom=${on}&dateTo=${next}`);
    expect(row(including.body)).toEqual(searched);
    expect(including.body.totalSearches).toBeGreaterThan(0);
    expect((await read(`searches?dateFrom=2026-01-01&dateTo=${on}`)).body.searches.find((s: { searchQuery: string }) => s.searchQuery === 'How do I install kiln?')).toBeUndefined();
    expect((await read(`searches?dateFrom=${on}&dateTo=${on}`)).body).toEqual({ searches: [], totalSearches: 0, nextCursor: null });
  });

  it('lists ratings as Mintlify’s agent feedback, and counts them by page', async () => {
    const { body } = await read('feedback');
    expect(body.feedback).toContainEqual({
      id: expect.any(String),
      path: 'guides/install',
      comment: 'clear',
      createdAt: expect.any(String),
      source: 'agent',
      status: 'pending',
      helpful: true,
      contact: null,
    });
    expect((await read('feedback?source=code_snippet')).body).toEqual({ feedback: [], nextCursor: null, hasMore: false });
    expect((await read('feedback?status=resolved,dismissed')).body.feedback).toEqual([]);
    expect((await read('feedback?status=pending')).body.feedback.length).toBe(body.feedback.length);
    const byPage = await read('feedback/by-page');
    expect(byPage.body.feedback.length).toBeGreaterThan(0);
    for (const p of byPage.body.feedback) expect(p).toEqual({ path: expect.any(String), thumbsUp: expect.any(Number), thumbsDown: 0, code: 0, total: p.thumbsUp });
  });

  it('counts questions by what asked them: a server (api) and a browser page (web)', async () => {
    const before = (await read('assistant/caller-stats')).body;
    expect(before.api).toBeGreaterThan(0);
    const r = await fetch(`${gw.url}/discovery/v2/assistant/${domain}/message`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.asst}`, 'content-type': 'application/json', origin: gw.url },
      body: JSON.stringify({ fp: 'anonymous', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Where is the config file?' }] }] }),
    });
    expect(r.status).toBe(200);
    await r.text();
    const after = await poll(
      'the question counted',
      async () => (await read('assistant/caller-stats')).body,
      (b) => b.total === before.total + 1,
    );
    expect(after).toEqual({ ...before, web: before.web + 1, total: before.total + 1 });
  });

  it('answers views and visitors empty: docent does not serve the docs pages', async () => {
    expect((await read('views')).body).toEqual({ totals: { human: 0, ai: 0, total: 0 }, views: [], hasMore: false });
    expect((await read('visitors?limit=250&offset=10')).body).toEqual({ totals: { human: 0, ai: 0, total: 0 }, visitors: [], hasMore: false });
  });
});

describe('assistant messages: what Mintlify accepts', () => {
  const ask = (version: 'v1' | 'v2', body: object) =>
    fetch(`${gw.url}/discovery/${version}/assistant/${domain}/message`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.asst}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const v2 = (extra: object) => ({ fp: 'anonymous', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'How do I install kiln?' }] }], ...extra });

  it('holds a retrievalPageSize past docent’s 1..20 (or a fraction) to its bounds and says so in X-Docent-Clamped', async () => {
    for (const [asked, used] of [
      [35, 20],
      [0, 1],
      [2.5, 2],
    ] as const) {
      const r = await ask('v2', v2({ retrievalPageSize: asked }));
      expect(r.status).toBe(200);
      expect(r.headers.get('x-docent-clamped')).toBe(`retrievalPageSize=${used}`);
      const sources = (await r.text()).split('\n\n').filter((f) => f.includes('"type":"source-url"'));
      expect(sources.length).toBeLessThanOrEqual(used);
    }
    const inBounds = await ask('v2', v2({ retrievalPageSize: 3 }));
    expect(inBounds.headers.get('x-docent-clamped')).toBeNull();
    await inBounds.text();
  });

  it('takes v1 messages of role data (AI SDK 4), and a message with parts but no content', async () => {
    const r = await ask('v1', {
      fp: 'anonymous',
      messages: [
        { role: 'data', content: '{"widget":"state"}' },
        { role: 'user', parts: [{ type: 'text', text: 'How do I install kiln?' }] },
      ],
    });
    expect(r.status).toBe(200);
    expect((await r.text()).trimEnd().split('\n').at(-1)).toMatch(/^d:/);
  });
});

describe('agent jobs: source as Mintlify gives it on the REST paths', () => {
  it('names the repository by its URL and the branch the agent works on, with docent’s owner/name and base ref beside them', async () => {
    const r = await fetch(`${gw.url}/v2/agent/widgets/job/${widgets.jobId}`, { headers: { authorization: `Bearer ${widgets.admin}` } });
    const job = (await r.json()) as { branch: string; source: unknown };
    expect(job.source).toEqual({ repository: `${gw.deps.config.github.gitUrl.replace(/\/+$/, '')}/acme/widgets`, ref: job.branch, name: 'acme/widgets', baseRef: 'main' });
    const list = (await (await fetch(`${gw.url}/v2/agent/widgets/jobs`, { headers: { authorization: `Bearer ${widgets.admin}` } })).json()) as { jobs: Array<{ id: string; source: unknown }> };
    expect(list.jobs.find((j) => j.id === widgets.jobId)!.source).toEqual(job.source);
  });
});
