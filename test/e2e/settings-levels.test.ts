import { randomBytes } from 'node:crypto';
import { createDocentClient } from '../../src/client';
import { runDocentIn } from '../support/cli';
import { deleteTestIndexes, ingestMiniDocs } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';

// Issue 53 items 1 and 8 against the real gateway over its socket: a project admin key tries what only the operator
// decides (the worker share, the caps, the network, secrets for agent code), keys it mints try to outlive it, a
// repository name climbs with `..`, and an organization's operator claims a domain whose docs it did not ingest.
let gw: RunningGateway;
let operator: { id: string; key: string };
let acmeOperator: string;

const call = async (key: string | undefined, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { ...(key && { authorization: `Bearer ${key}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

/** The newest audit entry of a route and key. */
const lastEntry = async (keyId: string, method: string, route: string) => {
  const entries = (await call(operator.key, 'GET', '/v2/admin/audit?limit=200')).body.entries as Array<Record<string, any>>;
  return entries.find((e) => e.keyId === keyId && e.method === method && e.route === route);
};

beforeAll(async () => {
  gw = await startGateway({ DOCENT_SECRET_KEY: randomBytes(32).toString('base64') });
  operator = await gw.deps.keys.create({ kind: 'operator', orgId: '*' });
  acmeOperator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'acme' })).key;
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'shop', orgId: 'acme', repository: 'acme/shop', ref: 'main' });
});
afterAll(async () => {
  await deleteTestIndexes(gw.deps.config);
  await gw.stop();
});

describe("the operator's settings", () => {
  it("a project admin key cannot raise its worker share, remove the operator's cap, or turn on network or secrets for agent code", async () => {
    expect(await call(operator.key, 'PATCH', '/v2/admin/projects/shop', { caps: { maxJobCostUsd: 5, maxTurnMinutes: 30 } })).toMatchObject({ status: 200 });
    const admin = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'shop' })).key;

    for (const [body, named] of [
      [{ fairnessWeight: 100 }, 'fairnessWeight'],
      [{ caps: { maxJobCostUsd: 0 } }, 'caps.maxJobCostUsd'],
      [{ caps: { maxTurnMinutes: 600 } }, 'caps.maxTurnMinutes'],
      [{ network: true }, 'network'],
      [{ secretsForAgentCode: true }, 'secretsForAgentCode'],
      [{ secretsToChecks: true }, 'secretsToChecks'],
    ] as const) {
      const refused = await call(admin, 'PATCH', '/v2/admin/projects/shop', body);
      expect(refused).toMatchObject({ status: 403, body: { code: 'permission_denied', error: expect.stringContaining(named) } });
    }
    // One refused field refuses the whole change: the setup command that came with it is not written either.
    expect(await call(admin, 'PATCH', '/v2/admin/projects/shop', { setup: ['npm ci'], network: true })).toMatchObject({ status: 403 });

    const project = (await call(operator.key, 'GET', '/v2/admin/projects/shop')).body;
    expect(project).toMatchObject({ maxJobCostUsd: 5, maxTurnMinutes: 30 });
    expect(project.fairnessWeight).toBeUndefined();
    expect(project.sandboxNetwork).toBeUndefined();
    expect(project.secretsForAgentCode).toBeUndefined();
    expect(project.setupCommands).toBeUndefined();
    // What the worker is given: the stored project as jobs read it.
    expect(await gw.deps.tenancy.getProject('shop')).toMatchObject({ maxJobCostUsd: 5, maxTurnMinutes: 30 });
  });

  it("the console's session and the CLI made from an admin key meet the same refusal", async () => {
    const admin = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'shop' })).key;
    const signIn = await fetch(`${gw.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: admin }) });
    expect(signIn.status).toBe(201);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const { csrfToken } = (await signIn.json()) as { csrfToken: string };
    const fromConsole = await fetch(`${gw.url}/v2/admin/projects/shop`, {
      method: 'PATCH',
      headers: { cookie, 'x-docent-csrf': csrfToken, origin: gw.url, 'content-type': 'application/json' },
      body: JSON.stringify({ network: true, caps: { maxJobCostUsd: 0 } }),
    });
    expect(fromConsole.status).toBe(403);
    expect(await fromConsole.json()).toMatchObject({ code: 'permission_denied' });

    const cli = await runDocentIn(['project', 'update', 'shop', '--fairness-weight', '100'], { DOCENT_API_URL: gw.url, DOCENT_OPERATOR_KEY: admin });
    expect(cli).toMatchObject({ code: 1, stderr: expect.stringContaining('fairnessWeight') });
    expect(await gw.deps.tenancy.getProject('shop')).toMatchObject({ maxJobCostUsd: 5 });
    expect((await gw.deps.tenancy.getProject('shop'))?.fairnessWeight).toBeUndefined();
  });

  it("an admin key may tighten the operator's settings and loosen them back up to the operator's value, not past it", async () => {
    await call(operator.key, 'PATCH', '/v2/admin/projects/shop', { network: true, allowHosts: ['registry.npmjs.org', '*.pypi.org'], fairnessWeight: 2 });
    const admin = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'shop' })).key;
    const patch = (body: unknown) => call(admin, 'PATCH', '/v2/admin/projects/shop', body);

    expect(await patch({ caps: { maxJobCostUsd: 1 }, fairnessWeight: 0.5, network: false, allowHosts: ['files.pypi.org'] })).toMatchObject({
      status: 200,
      body: { caps: { maxJobCostUsd: 1 }, fairnessWeight: 0.5, sandboxNetwork: false, sandboxAllowHosts: ['files.pypi.org'] },
    });
    // Back up to the operator's values: the operator's are remembered apart from what the admin tightened them to.
    expect(await patch({ caps: { maxJobCostUsd: 5 }, fairnessWeight: 2, network: true, allowHosts: ['registry.npmjs.org', '*.pypi.org'] })).toMatchObject({
      status: 200,
      body: { caps: { maxJobCostUsd: 5 }, fairnessWeight: 2, sandboxNetwork: true },
    });
    expect(await patch({ caps: { maxJobCostUsd: 5.01 } })).toMatchObject({ status: 403, body: { error: expect.stringContaining('caps.maxJobCostUsd') } });
    expect(await patch({ fairnessWeight: 2.5 })).toMatchObject({ status: 403, body: { error: expect.stringContaining('fairnessWeight') } });
    expect(await patch({ allowHosts: ['attacker.example'] })).toMatchObject({ status: 403, body: { error: expect.stringContaining('allowHosts') } });
    // An empty list is any public host: wider than the operator's list.
    expect(await patch({ allowHosts: [] })).toMatchObject({ status: 403, body: { error: expect.stringContaining('allowHosts') } });
    // A form that sends every field again (the console's) restates values in force: not a loosening.
    expect(await patch({ setup: ['npm ci'], network: true, caps: { maxTurnMinutes: 30 } })).toMatchObject({ status: 200, body: { setupCommands: ['npm ci'] } });
    // The operator's own key loosens as it likes.
    expect(await call(operator.key, 'PATCH', '/v2/admin/projects/shop', { fairnessWeight: 3, caps: { maxJobCostUsd: 0 } })).toMatchObject({ status: 200, body: { fairnessWeight: 3 } });
    expect((await gw.deps.tenancy.getProject('shop'))?.maxJobCostUsd).toBeUndefined();
  });

  it('the audit entry of a settings change lists each setting moved with its old and new value, and a made key by id and kind', async () => {
    const admin = await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'shop' });
    expect(await call(admin.key, 'PATCH', '/v2/admin/projects/shop', { caps: { maxTurnTokens: 1000 }, fairnessWeight: 1 })).toMatchObject({ status: 200 });
    const entry = await lastEntry(admin.id, 'PATCH', '/v2/admin/projects/{projectId}');
    expect(entry).toMatchObject({ status: 200, keyKind: 'admin', changes: { maxTurnTokens: { old: null, new: 1000 }, fairnessWeight: { old: 3, new: null } } });

    await call(operator.key, 'POST', '/v2/admin/projects/shop/secrets', { name: 'NPM_TOKEN', value: 'npm_never_in_the_log' });
    const minted = await call(admin.key, 'POST', '/v2/admin/projects/shop/keys', { kind: 'admin' });
    expect(minted).toMatchObject({ status: 201, body: { createdBy: admin.id } });
    expect(await lastEntry(admin.id, 'POST', '/v2/admin/projects/{projectId}/keys')).toMatchObject({ status: 201, createdKey: { id: minted.body.id, kind: 'admin' } });
    const log = JSON.stringify((await call(operator.key, 'GET', '/v2/admin/audit?limit=200')).body);
    expect(log).not.toContain('npm_never_in_the_log');
    expect(log).not.toContain(minted.body.key);

    // Connect reads the same entry.
    const page = await createDocentClient({ baseUrl: gw.url, apiKey: operator.key }).admin.listAuditEntries({ limit: 200 });
    const rpcEntry = page.entries.find((e) => e.keyId === admin.id && e.route === '/v2/admin/projects/{projectId}/keys' && e.status === 201);
    expect(rpcEntry).toMatchObject({ createdKeyId: minted.body.id, createdKeyKind: 'admin' });
    const settings = page.entries.find((e) => e.keyId === admin.id && e.method === 'PATCH');
    expect(settings?.changes).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'maxTurnTokens', oldJson: 'null', newJson: '1000' })]));
  });
});

describe('keys an admin key made', () => {
  it('are revoked with it, down the line, unless the revocation keeps them', async () => {
    const first = await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'shop' });
    const second = (await call(first.key, 'POST', '/v2/admin/projects/shop/keys', { kind: 'admin' })).body;
    const third = (await call(second.key, 'POST', '/v2/admin/projects/shop/keys', { kind: 'admin' })).body;
    expect(third).toMatchObject({ createdBy: second.id });
    expect(await call(third.key, 'GET', '/v2/admin/projects/shop')).toMatchObject({ status: 200 });

    const revoked = await call(operator.key, 'DELETE', `/v2/admin/projects/shop/keys/${first.id}`);
    expect(revoked).toMatchObject({ status: 200, body: { id: first.id, revoked: true, alsoRevoked: expect.arrayContaining([second.id, third.id]) } });
    for (const key of [first.key, second.key, third.key]) expect(await call(key, 'GET', '/v2/admin/projects/shop')).toMatchObject({ status: 401 });
    expect(await lastEntry(operator.id, 'DELETE', '/v2/admin/projects/{projectId}/keys/{keyId}')).toMatchObject({ revokedKeys: [first.id, second.id, third.id] });

    const lead = await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'shop' });
    const ci = (await call(lead.key, 'POST', '/v2/admin/projects/shop/keys', { kind: 'admin' })).body;
    expect(await call(operator.key, 'DELETE', `/v2/admin/projects/shop/keys/${lead.id}?keepMinted=true`)).toMatchObject({ status: 200, body: { alsoRevoked: [] } });
    expect(await call(ci.key, 'GET', '/v2/admin/projects/shop')).toMatchObject({ status: 200 });
    expect(await call(lead.key, 'GET', '/v2/admin/projects/shop')).toMatchObject({ status: 401 });
  });
});

describe('repository names and documentation domains', () => {
  it('a repository named with `..` is refused', async () => {
    for (const repository of ['acme/..', '../shop', 'acme/a..b', 'https://git.example/acme/../globex/secret.git', 'https://git.example/acme/%2e%2e/x'])
      expect(await call(operator.key, 'POST', '/v2/admin/projects', { id: 'climb', orgId: 'acme', repository, ref: 'main', domain: 'climb.acme.test' })).toMatchObject({
        status: 400,
        body: { code: 'invalid_argument' },
      });
    expect(await gw.deps.tenancy.getProject('climb')).toBeNull();
  });

  it("an organization's operator cannot claim a domain whose docs it did not ingest; the deployment's operator can", async () => {
    await ingestMiniDocs(gw.deps.config, 'orphan.docs.test');
    const claim = (key: string, id: string) => call(key, 'POST', '/v2/admin/projects', { id, orgId: 'acme', repository: 'acme/shop', ref: 'main', domain: 'orphan.docs.test' });
    expect(await claim(acmeOperator, 'grab')).toMatchObject({ status: 403, body: { code: 'permission_denied', error: expect.stringContaining('orphan.docs.test') } });
    expect(await gw.deps.tenancy.getProjectByDomain('orphan.docs.test')).toBeNull();
    // A domain nothing was ingested for is anyone's to name.
    expect(await call(acmeOperator, 'POST', '/v2/admin/projects', { id: 'fresh', orgId: 'acme', repository: 'acme/shop', ref: 'main', domain: 'fresh.docs.test' })).toMatchObject({
      status: 201,
    });
    expect(await claim(operator.key, 'given')).toMatchObject({ status: 201, body: { domain: 'orphan.docs.test' } });
  }, 120_000);
});
