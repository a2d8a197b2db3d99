import { Code, type ConnectError } from '@connectrpc/connect';
import { createDocentClient } from '../../src/client';
import { runDocent } from '../support/cli';
import { startGateway, type RunningGateway } from '../support/gateway';
import { callApi } from '../support/http';
import { poll } from '../support/poll';
import { type ScriptedModel, modelSettings, startScriptedModel } from '../support/scripted-model';
import { terminateJobWorkflows } from '../support/workerless-jobs';

// Keys as Mintlify's have them: an expiry (401 after it), allowed addresses and networks (403 from others) and, for
// admin keys, a read-only scope (403 for a change), made through the operator API and the CLI and checked on REST,
// Connect and the operator API alike. The gateway trusts 127.0.0.1 as a proxy, so X-Forwarded-For names the client.

let gw: RunningGateway;
let model: ScriptedModel;
let operator: string;

beforeAll(async () => {
  model = await startScriptedModel(() => ({ text: 'not used: no worker runs in this suite' }));
  gw = await startGateway({ ...modelSettings(model), DOCENT_TRUSTED_PROXY: '127.0.0.1' });
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'widgets', orgId: 'acme', repository: 'acme/widgets', ref: 'main', domain: 'docs.widgets.test' });
  operator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'acme' })).key;
});
afterAll(async () => {
  if (gw) await terminateJobWorkflows(gw);
  await gw?.stop();
  await model?.close();
});

/** A key of project widgets made through the operator API, with `restrictions`. */
async function makeKey(body: object): Promise<{ id: string; key: string }> {
  const r = await callApi(gw.url, operator, 'POST', '/v2/admin/projects/widgets/keys', body);
  expect(r.status).toBe(201);
  return r.json();
}
const from = (address: string) => ({ 'x-forwarded-for': address });

describe('read-only admin keys', () => {
  it('read jobs over REST and Connect, and are refused (403) every change, the operator API’s too', async () => {
    const { key } = await makeKey({ kind: 'admin', scope: 'read' });
    expect((await callApi(gw.url, key, 'GET', '/v2/agent/widgets/jobs')).status).toBe(200);
    expect((await callApi(gw.url, key, 'GET', '/v1/analytics/widgets/searches')).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/v2/agent/widgets/job', { prompt: 'fix the typo' }],
      ['POST', '/v1/agent/widgets/job', { messages: [{ role: 'user', content: 'fix the typo' }] }],
      ['POST', '/v2/agent/widgets/automations', { name: 'n', trigger: { type: 'manual' }, instruction: 'i', output: 'pull_request' }],
      ['POST', '/v2/admin/projects/widgets/keys', { kind: 'admin' }],
    ] as const) {
      const r = await callApi(gw.url, key, method, path, body);
      expect({ path, status: r.status, body: await r.json() }).toEqual({ path, status: 403, body: { code: 'permission_denied', error: expect.stringContaining('read-only') } });
    }
    expect(await gw.deps.mongo.db.collection('jobs').countDocuments()).toBe(0);
    const client = createDocentClient({ baseUrl: gw.url, apiKey: key });
    expect((await client.agent.listAgentJobs({ projectId: 'widgets' })).jobs).toEqual([]);
    const refused = await client.agent.createAgentJob({ projectId: 'widgets', prompt: 'fix the typo' }).catch((e: unknown) => e);
    expect((refused as ConnectError).code).toBe(Code.PermissionDenied);
  });

  it('is an admin key’s only: an assistant key with a scope is refused when made', async () => {
    const r = await callApi(gw.url, operator, 'POST', '/v2/admin/projects/widgets/keys', { kind: 'assistant', scope: 'read' });
    expect(r.status).toBe(400);
    expect((await r.json()).error).toContain('only admin keys have a scope');
  });
});

describe('allowed addresses', () => {
  it('let a key work from an allowed address or network only (403 elsewhere), on the agent and assistant APIs', async () => {
    const admin = await makeKey({ kind: 'admin', allowedIps: ['203.0.113.0/24', '2001:db8::1'] });
    expect((await callApi(gw.url, admin.key, 'GET', '/v2/agent/widgets/jobs', undefined, from('203.0.113.9'))).status).toBe(200);
    expect((await callApi(gw.url, admin.key, 'GET', '/v2/agent/widgets/jobs', undefined, from('2001:0db8:0:0::1'))).status).toBe(200);
    const elsewhere = await callApi(gw.url, admin.key, 'GET', '/v2/agent/widgets/jobs', undefined, from('198.51.100.4'));
    expect(elsewhere.status).toBe(403);
    expect(await elsewhere.json()).toEqual({ code: 'permission_denied', error: expect.stringContaining('may not be used from this address') });
    // No forwarded address: the client is the socket's, 127.0.0.1, which the key does not list.
    expect((await callApi(gw.url, admin.key, 'GET', '/v2/agent/widgets/jobs')).status).toBe(403);

    const asst = await makeKey({ kind: 'assistant', allowedIps: ['127.0.0.1'] });
    expect((await callApi(gw.url, asst.key, 'POST', '/discovery/v1/search/docs.widgets.test', { query: 'install' })).status).toBe(200);
    expect((await callApi(gw.url, asst.key, 'POST', '/discovery/v1/search/docs.widgets.test', { query: 'install' }, from('198.51.100.4'))).status).toBe(403);
  });

  it('must be addresses or networks', async () => {
    const r = await callApi(gw.url, operator, 'POST', '/v2/admin/projects/widgets/keys', { kind: 'admin', allowedIps: ['10.0.0.0/33'] });
    expect(r.status).toBe(400);
    expect((await r.json()).error).toContain('10.0.0.0/33');
  });
});

describe('expiry', () => {
  it('ends a key at its time (401 after it); a time already past is refused when made', async () => {
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const { id, key } = await makeKey({ kind: 'admin', expiresAt });
    expect((await callApi(gw.url, key, 'GET', '/v2/agent/widgets/jobs')).status).toBe(200);
    const listed = (await (await callApi(gw.url, operator, 'GET', '/v2/admin/projects/widgets/keys')).json()).keys.find((k: { id: string }) => k.id === id);
    expect(listed).toMatchObject({ expiresAt });
    const after = await poll(
      'the key to expire',
      () => callApi(gw.url, key, 'GET', '/v2/agent/widgets/jobs').then((r) => r.status),
      (s) => s !== 200,
      10_000,
    );
    expect(after).toBe(401);
    const past = await callApi(gw.url, operator, 'POST', '/v2/admin/projects/widgets/keys', { kind: 'admin', expiresAt: '2020-01-01T00:00:00Z' });
    expect(past.status).toBe(400);
  });
});

describe('docent key create', () => {
  it('sets the expiry, the allowed addresses and the scope, and key list shows them', async () => {
    const env = { DOCENT_API_URL: gw.url, DOCENT_OPERATOR_KEY: operator };
    const made = await runDocent(['key', 'create', '--project', 'widgets', '--kind', 'admin', '--scope', 'read', '--expires', '30d', '--allow-ip', '203.0.113.0/24,198.51.100.7', '--json'], env);
    expect(made.code).toBe(0);
    const key = JSON.parse(made.stdout) as { id: string; scope: string; allowedIps: string[]; expiresAt: string };
    expect(key).toMatchObject({ scope: 'read', allowedIps: ['203.0.113.0/24', '198.51.100.7'] });
    expect(Date.parse(key.expiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    const list = await runDocent(['key', 'list', '--project', 'widgets'], env);
    expect(list.stdout).toMatch(new RegExp(`${key.id}  admin  active  widgets  read-only  expires \\S+ \\S+  from 203\\.0\\.113\\.0/24,198\\.51\\.100\\.7`));
    const bad = await runDocent(['key', 'create', '--project', 'widgets', '--kind', 'assistant', '--scope', 'read'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--scope applies to admin keys only');
  });
});
