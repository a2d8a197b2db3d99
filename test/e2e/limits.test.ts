import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AgentService } from '../../src/gen/agent/v2/agent_pb';
import { SearchService } from '../../src/gen/discovery/v1/search_pb';
import { AssistantService as AssistantV2 } from '../../src/gen/discovery/v2/assistant_pb';
import { testConfig } from '../support/config';
import { deleteTestIndexes, ingestMiniDocs, sameStack } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { callApi, sseChunks, v2Body, type JsonResponse } from '../support/http';
import { startScriptedModel, type ScriptedModel, modelSettings } from '../support/scripted-model';
import { terminateJobWorkflows } from '../support/workerless-jobs';
import { clearOfWindowTurn } from '../support/limit-windows';

// docs/keys-and-limits.md at the endpoints: through the real gateway over sockets, with counters in the real
// database. Agent jobs need a configured model to be accepted, but no worker: the test only counts admissions.

// The tests count units within windows: the file (10-20 s) must not run across the top of an hour.
beforeAll(() => clearOfWindowTurn(60_000));

let model: ScriptedModel;
const gateways: RunningGateway[] = [];

async function gateway(overrides: Record<string, string>): Promise<RunningGateway> {
  const gw = await startGateway(overrides);
  gateways.push(gw);
  return gw;
}

/** An organization, projects and one admin key per project. */
async function adminKeys(gw: RunningGateway, projects: string[]): Promise<Record<string, string>> {
  await gw.deps.tenancy.createOrg('acme');
  const keys: Record<string, string> = {};
  for (const p of projects) {
    await gw.deps.tenancy.createProject({ _id: p, orgId: 'acme', repository: `acme/${p}`, ref: 'main' });
    keys[p] = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: p })).key;
  }
  return keys;
}

const jobsIn = (gw: RunningGateway) => gw.deps.mongo.db.collection<{ _id: string; projectId: string; turn: number }>('jobs');

/** What every 429 carries: the error shape, Retry-After and the RateLimit-* headers of the exhausted limit; returns the message. */
async function expectRefusedByLimit(r: JsonResponse, limit: number): Promise<string> {
  expect(r.status).toBe(429);
  const retryAfter = Number(r.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter) && retryAfter > 0).toBe(true);
  expect(r.headers.get('ratelimit-limit')).toBe(String(limit));
  expect(r.headers.get('ratelimit-remaining')).toBe('0');
  expect(r.headers.get('ratelimit-reset')).toBe(String(retryAfter));
  const body = await r.json();
  expect(body).toEqual({ error: expect.stringContaining('rate limit reached'), code: 'resource_exhausted', retryAfterSeconds: retryAfter });
  return body.error;
}

/** A Connect call refused by a limit: ResourceExhausted with the same headers as error metadata. */
async function expectResourceExhausted(call: Promise<unknown>, limit: number) {
  const err = ConnectError.from(
    await call.then(
      () => new Error('the call was admitted'),
      (e: unknown) => e,
    ),
  );
  expect(err.code).toBe(Code.ResourceExhausted);
  expect(err.metadata.get('ratelimit-limit')).toBe(String(limit));
  expect(err.metadata.get('ratelimit-remaining')).toBe('0');
  expect(Number(err.metadata.get('retry-after'))).toBeGreaterThan(0);
}

beforeAll(async () => {
  model = await startScriptedModel(() => ({ text: 'not used: no worker runs in this suite' }));
});

afterAll(async () => {
  // The created jobs' workflows have no worker; terminate them so they do not linger in the shared dev server.
  for (const gw of gateways) {
    await terminateJobWorkflows(gw);
    await gw.stop();
  }
  await model?.close();
});

describe('agent job limit per project', () => {
  let gw: RunningGateway;
  let keys: Record<string, string>;
  beforeAll(async () => {
    gw = await gateway({ ...modelSettings(model), DOCENT_LIMIT_JOBS_PER_HOUR: '100' });
    keys = await adminKeys(gw, ['busy']);
  });

  it('admits exactly 100 of 150 concurrent creates: 100 jobs with workflows, 50 answers 429 with the limit headers', async () => {
    const results = await Promise.all(Array.from({ length: 150 }, (_, i) => callApi(gw.url, keys.busy!, 'POST', '/v2/agent/busy/job', { prompt: `task ${i}` })));
    const created = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 429);
    expect(created).toHaveLength(100);
    expect(refused).toHaveLength(50);
    for (const r of refused) await expectRefusedByLimit(r, 100);
    for (const r of created) expect(r.headers.get('ratelimit-limit')).toBe('100');

    const ids = await Promise.all(created.map(async (r) => (await r.json()).id as string));
    expect(new Set(ids).size).toBe(100);
    expect(await jobsIn(gw).countDocuments({ projectId: 'busy' })).toBe(100);
    const described = await Promise.all(ids.map((id) => gw.deps.temporal.workflow.getHandle(`agent-job-${id}`).describe()));
    expect(described.every((d) => d.status.name === 'RUNNING')).toBe(true);
  });

  it('refuses a Connect createAgentJob over the limit with ResourceExhausted', async () => {
    const client = createClient(AgentService, createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' }));
    await expectResourceExhausted(client.createAgentJob({ projectId: 'busy', prompt: 'one more' }, { headers: { authorization: `Bearer ${keys.busy}` } }), 100);
    expect(await jobsIn(gw).countDocuments({ projectId: 'busy' })).toBe(100);
  });
});

describe('follow-ups share the project limit with creates', () => {
  let gw: RunningGateway;
  let keys: Record<string, string>;
  const connectClient = () => createClient(AgentService, createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' }));
  beforeAll(async () => {
    gw = await gateway({ ...modelSettings(model), DOCENT_LIMIT_JOBS_PER_HOUR: '3' });
    keys = await adminKeys(gw, ['steady', 'elsewhere']);
  });

  it('counts create, REST follow-up and Connect follow-up alike; then refuses both kinds; refused requests use nothing', async () => {
    const api = (method: string, path: string, body?: unknown, key = keys.steady!) => callApi(gw.url, key, method, path, body);
    // Refused before admission: bad body, bad key, another project's key, an unknown job. None may count.
    expect((await api('POST', '/v2/agent/steady/job', { prompt: '  ' })).status).toBe(400);
    expect((await api('POST', '/v2/agent/steady/job', { prompt: 'x' }, 'docent_admin_nope')).status).toBe(401);
    expect((await api('POST', '/v2/agent/steady/job', { prompt: 'x' }, keys.elsewhere)).status).toBe(404);
    expect((await api('POST', '/v2/agent/steady/job/job_unknown/message', { prompt: 'x' })).status).toBe(404);

    const created = await api('POST', '/v2/agent/steady/job', { prompt: 'first' });
    expect(created.status).toBe(201);
    expect(created.headers.get('ratelimit-remaining')).toBe('2');
    const jobId: string = (await created.json()).id;
    expect((await api('POST', `/v2/agent/steady/job/${jobId}/message`, { prompt: '' })).status).toBe(400);

    const followUp = await api('POST', `/v2/agent/steady/job/${jobId}/message`, { prompt: 'second' });
    expect(followUp.status).toBe(200);
    expect(followUp.headers.get('ratelimit-remaining')).toBe('1');
    let remaining: string | null = null;
    await connectClient().sendAgentJobMessage(
      { projectId: 'steady', jobId, prompt: 'third' },
      { headers: { authorization: `Bearer ${keys.steady}` }, onHeader: (h) => (remaining = h.get('ratelimit-remaining')) },
    );
    expect(remaining).toBe('0');

    await expectRefusedByLimit(await api('POST', `/v2/agent/steady/job/${jobId}/message`, { prompt: 'fourth' }), 3);
    await expectRefusedByLimit(await api('POST', '/v2/agent/steady/job', { prompt: 'another job' }), 3);
    await expectResourceExhausted(connectClient().sendAgentJobMessage({ projectId: 'steady', jobId, prompt: 'fifth' }, { headers: { authorization: `Bearer ${keys.steady}` } }), 3);
    // The refused follow-ups left the job as it was: one job, three turns.
    expect(await jobsIn(gw).find({ projectId: 'steady' }).toArray()).toEqual([expect.objectContaining({ _id: jobId, turn: 3 })]);
    // Another project's quota is its own.
    expect((await api('POST', '/v2/agent/elsewhere/job', { prompt: 'x' }, keys.elsewhere)).status).toBe(201);
  });
});

describe('assistant message limit per key', () => {
  const config = testConfig();
  const domain = 'docs.kiln.test';
  let gw: RunningGateway;
  let key: string;
  let otherKey: string;
  const post = (body: object, k = key) => callApi(gw.url, k, 'POST', `/discovery/v2/assistant/${domain}/message`, body);

  beforeAll(async () => {
    await ingestMiniDocs(config, domain);
    // No model: the extractive answer.
    gw = await gateway(sameStack(config, { DOCENT_MODEL_PROVIDER: '', DOCENT_LIMIT_ASSISTANT_PER_KEY_MONTH: '5' }));
    key = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
    otherKey = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain: 'docs.other.test' })).key;
  });
  afterAll(() => deleteTestIndexes(config));

  it('uses no quota for requests refused with 401, 400 or 404', async () => {
    expect((await post(v2Body('quickstart'), 'docent_asst_nope')).status).toBe(401);
    expect((await post({ fp: 'anonymous', messages: [] })).status).toBe(400);
    expect((await post(v2Body('quickstart', { currentPath: 'a'.repeat(201) }))).status).toBe(400);
    expect((await post(v2Body('quickstart'), otherKey)).status).toBe(404);
  });

  it('streams exactly 5 of 12 concurrent v2 messages and answers the other 7 with 429 and the limit headers', async () => {
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => post(v2Body(`how do I start, take ${i}?`))));
    const answered = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    expect(answered).toHaveLength(5);
    expect(refused).toHaveLength(7);
    for (const r of refused) await expectRefusedByLimit(r, 5);
    for (const r of answered) {
      expect(r.headers.get('ratelimit-limit')).toBe('5');
      expect(Number(r.headers.get('ratelimit-remaining'))).toBeLessThan(5);
      const chunks = sseChunks(await r.text());
      expect(chunks.at(-1)).toBe('[DONE]');
      expect(chunks.at(-2)).toMatchObject({ type: 'finish', threadId: r.headers.get('x-thread-id') });
      expect(chunks.some((c) => c.type === 'text-delta')).toBe(true);
    }
  });

  it('refuses the Connect v2 SendMessage over the limit with ResourceExhausted, and other refusals keep their codes', async () => {
    const client = createClient(AssistantV2, createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' }));
    const drain = async (d = domain) => {
      const events = client.sendMessage({ domain: d, fp: 'anonymous', messages: [{ role: 'user', parts: [{ type: 'text', text: 'quickstart' }] }] }, { headers: { authorization: `Bearer ${key}` } });
      for await (const e of events) void e;
    };
    await expectResourceExhausted(drain(), 5);
    // Streaming RPCs fail while their messages are read; their errors must still be mapped to the public codes.
    await expect(drain('docs.other.test')).rejects.toMatchObject({ code: Code.NotFound });
  });
});

describe('search limit per key', () => {
  const domain = 'docs.search.test';
  let gw: RunningGateway;
  let key: string;
  let otherKey: string;
  const search = (body: object, k = key) => callApi(gw.url, k, 'POST', `/discovery/v1/search/${domain}`, body);
  const connectSearch = () =>
    createClient(SearchService, createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' })).search({ domain, query: 'install' }, { headers: { authorization: `Bearer ${key}` } });

  beforeAll(async () => {
    // No docs are ingested for this domain: a search answers no results, which is all the limit needs.
    gw = await gateway({ DOCENT_LIMIT_SEARCH_PER_KEY_MONTH: '4', DOCENT_LIMIT_ASSISTANT_PER_KEY_MONTH: '1' });
    key = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
    otherKey = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain: 'docs.other.test' })).key;
  });

  it('uses no quota for searches refused with 401, 400 or 404', async () => {
    expect((await search({ query: 'install' }, 'docent_asst_nope')).status).toBe(401);
    expect((await search({ query: 'install', pageSize: 99 })).status).toBe(400);
    expect((await search({ query: 'install' }, otherKey)).status).toBe(404);
  });

  it('admits exactly 3 of 10 concurrent REST searches after one Connect search, then refuses REST and Connect alike', async () => {
    expect((await connectSearch()).results).toEqual([]);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => search({ query: `install, take ${i}` })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(7);
    for (const r of refused) expect(await expectRefusedByLimit(r, 4)).toContain('searches for this key');
    await expectResourceExhausted(connectSearch(), 4);
  });

  it('does not spend assistant messages, which have a quota of their own', async () => {
    const r = await callApi(gw.url, key, 'POST', `/discovery/v2/assistant/${domain}/message`, v2Body('how do I install?'));
    expect(r.status).toBe(200);
    await r.text();
  });
});

describe('per-IP limit behind a trusted proxy', () => {
  const domain = 'docs.proxied.test';
  let gw: RunningGateway;
  let key: string;
  const ask = async (forwardedFor: string) => {
    const r = await callApi(gw.url, key, 'POST', `/discovery/v2/assistant/${domain}/message`, v2Body('how do I install?'), { 'x-forwarded-for': forwardedFor });
    if (r.status === 200) await r.text();
    return r;
  };

  beforeAll(async () => {
    gw = await gateway({ DOCENT_TRUSTED_PROXY: '127.0.0.1', DOCENT_LIMIT_ASSISTANT_PER_IP_DAY: '2', DOCENT_LIMIT_SEARCH_PER_IP_DAY: '2' });
    key = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  });

  it('counts every address of one IPv6 /64 as one client, and another /64 as another', async () => {
    expect((await ask('2001:db8:5:1::a')).status).toBe(200);
    expect((await ask('2001:db8:5:1:dead:beef:0:1')).status).toBe(200);
    expect(await expectRefusedByLimit(await ask('2001:db8:5:1::b'), 2)).toContain('from this address');
    expect((await ask('2001:db8:5:2::a')).status).toBe(200);
  });

  it('limits searches per client address too, and tells an admitted search what is left', async () => {
    const search = (forwardedFor: string) => callApi(gw.url, key, 'POST', `/discovery/v1/search/${domain}`, { query: 'install' }, { 'x-forwarded-for': forwardedFor });
    const first = await search('198.51.100.7');
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBeTruthy();
    expect((await search('198.51.100.7')).status).toBe(200);
    expect(await expectRefusedByLimit(await search('198.51.100.7'), 2)).toContain('from this address');
    expect((await search('198.51.100.8')).status).toBe(200);
  });
});

describe('a request refused by a full window', () => {
  const domain = 'docs.quiet.test';
  let gw: RunningGateway;
  let assistantKey: string;
  let adminKey: string;
  const commands: string[] = [];

  beforeAll(async () => {
    const url = testConfig().mongo.url;
    gw = await gateway({
      ...modelSettings(model),
      // The driver's command monitoring, turned on in the connection string, reports every command the gateway sends.
      DOCENT_MONGO_URL: url + (url.includes('?') ? '&' : /^mongodb(\+srv)?:\/\/[^/]+\//.test(url) ? '?' : '/?') + 'monitorCommands=true',
      // Long enough that the key and the project are read once during the test: only the limits are observed.
      DOCENT_LOOKUP_CACHE_MS: '60000',
      DOCENT_LIMIT_SEARCH_PER_KEY_MONTH: '1',
      DOCENT_LIMIT_ASSISTANT_PER_KEY_MONTH: '1',
      DOCENT_LIMIT_JOBS_PER_HOUR: '1',
    });
    gw.deps.mongo.client.on('commandStarted', (e) => commands.push(`${e.commandName} ${String(e.command[e.commandName])}`));
    await gw.deps.tenancy.createOrg('quiet');
    await gw.deps.tenancy.createProject({ _id: 'quiet', orgId: 'quiet', repository: 'acme/quiet', ref: 'main', domain });
    assistantKey = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'quiet', domain })).key;
    adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'quiet', projectId: 'quiet' })).key;
  });

  it('reads nothing from the database: searches, assistant messages and agent jobs', async () => {
    const search = () => callApi(gw.url, assistantKey, 'POST', `/discovery/v1/search/${domain}`, { query: 'install' });
    const message = () => callApi(gw.url, assistantKey, 'POST', `/discovery/v2/assistant/${domain}/message`, v2Body('how do I install?'));
    const createJob = () => callApi(gw.url, adminKey, 'POST', '/v2/agent/quiet/job', { prompt: 'fix the typo' });
    expect((await search()).status).toBe(200);
    const answered = await message();
    expect(answered.status).toBe(200);
    await answered.text();
    expect((await createJob()).status).toBe(201);
    // The first refusal of each may still read (the window is learnt full); the ones after it must not.
    for (const call of [search, message, createJob]) await expectRefusedByLimit(await call(), 1);
    expect(commands.length).toBeGreaterThan(0); // monitoring works: the admitted requests were seen
    commands.length = 0;
    for (let i = 0; i < 5; i++) for (const call of [search, message, createJob]) await expectRefusedByLimit(await call(), 1);
    expect(commands).toEqual([]);
  });
});
