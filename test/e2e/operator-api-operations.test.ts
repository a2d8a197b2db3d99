import { createHmac, randomBytes } from 'node:crypto';
import { ProjectWebhookSecrets } from '../../src/github/webhook-secrets';
import { startGateway, type RunningGateway } from '../support/gateway';

// The operator API's docs, cache and automation operations over the real gateway and Temporal; a project's admin key
// on its own project and on another; every refusal in the audit log; /openapi.json naming the real credentials.
let gw: RunningGateway;
let operator: { id: string; key: string };
let webAdmin: { id: string; key: string };
const run = randomBytes(3).toString('hex');
const web = `web-${run}`;
const shop = `shop-${run}`;
const webDomain = `web-${run}.opsapi.test`;
const shopDomain = `shop-${run}.opsapi.test`;

const call = async (key: string | undefined, method: string, path: string, body?: unknown, raw?: string) => {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { ...(key && { authorization: `Bearer ${key}` }), ...((body !== undefined || raw !== undefined) && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    ...(raw !== undefined && { body: raw }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

const auditOf = async (keyId: string) => ((await call(operator.key, 'GET', '/v2/admin/audit?limit=200')).body.entries as Record<string, any>[]).filter((e) => e.keyId === keyId);

beforeAll(async () => {
  gw = await startGateway({ DOCENT_SECRET_KEY: randomBytes(32).toString('base64') });
  operator = await gw.deps.keys.create({ kind: 'operator', orgId: '*' });
  await gw.deps.tenancy.createOrg(`org-${run}`).catch(() => undefined);
  await gw.deps.tenancy.createProject({ _id: web, orgId: `org-${run}`, repository: 'acme/web', ref: 'main', domain: webDomain });
  await gw.deps.tenancy.createProject({ _id: shop, orgId: `org-${run}`, repository: 'acme/shop', ref: 'main', domain: shopDomain });
  webAdmin = await gw.deps.keys.create({ kind: 'admin', orgId: `org-${run}`, projectId: web });
});
afterAll(async () => {
  for (const domain of [webDomain, shopDomain]) await call(operator.key, 'DELETE', `/v2/admin/docs/${domain}/follow`);
  await gw.stop();
});

describe('operator API operations', () => {
  it('an operator key follows a docs repository, reads its status and stops following it', async () => {
    const followed = await call(operator.key, 'POST', `/v2/admin/docs/${shopDomain}/follow`, { repository: 'acme/shop-docs', docsPath: '/docs/', every: '2h', firstNow: false });
    expect(followed).toMatchObject({ status: 200, body: { domain: shopDomain, source: { repository: 'acme/shop-docs', ref: 'main', docsPath: 'docs' }, everyMs: 7_200_000 } });
    expect(await call(operator.key, 'GET', `/v2/admin/docs/${shopDomain}`)).toMatchObject({
      status: 200,
      body: { domain: shopDomain, source: { repository: 'acme/shop-docs' }, everyMs: 7_200_000, running: false },
    });
    // The CLI's own checks, in the gateway: a path out of the repository, an interval out of range, both sources.
    expect(await call(operator.key, 'POST', `/v2/admin/docs/${shopDomain}/follow`, { repository: 'acme/x', docsPath: 'docs/../..' })).toMatchObject({
      status: 400,
      body: { code: 'invalid_argument', error: expect.stringContaining('inside the repository') },
    });
    expect(await call(operator.key, 'POST', `/v2/admin/docs/${shopDomain}/follow`, { sitemap: 'https://x.test/sitemap.xml', every: '30s' })).toMatchObject({ status: 400 });
    expect(await call(operator.key, 'POST', `/v2/admin/docs/${shopDomain}/follow`, { sitemap: 'https://x.test/s.xml', repository: 'a/b' })).toMatchObject({ status: 400 });
    expect(await call(operator.key, 'DELETE', `/v2/admin/docs/${shopDomain}/follow`)).toMatchObject({ status: 200, body: { followed: false } });
    expect(await call(operator.key, 'GET', `/v2/admin/docs/${shopDomain}`)).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });

  it('an operator key clears a setup cache and runs the automation operations of a project', async () => {
    expect(await call(operator.key, 'POST', `/v2/admin/projects/${shop}/cache/clear`)).toMatchObject({ status: 200, body: { id: shop, setupCacheGeneration: 1 } });
    const hookSecret = await call(operator.key, 'POST', `/v2/admin/projects/${shop}/github/webhook-secret`);
    expect(hookSecret).toMatchObject({ status: 200, body: { projectId: shop, repository: 'acme/shop', secret: expect.any(String) } });
    // The secret is the one GitHub's deliveries for the repository are checked against.
    const delivery = '{"zen":"Keep it logically awesome."}';
    const signature = `sha256=${createHmac('sha256', hookSecret.body.secret as string)
      .update(delivery)
      .digest('hex')}`;
    expect(await new ProjectWebhookSecrets(gw.deps.mongo.db, gw.deps.config.secretKey).verify('acme/shop', delivery, signature)).toEqual({ projectId: shop });
    const made = await call(operator.key, 'POST', `/v2/admin/projects/${shop}/automations`, { name: 'weekly', trigger: { type: 'manual' }, instruction: 'Tidy the docs', output: 'pull_request' });
    expect(made).toMatchObject({ status: 201, body: { name: 'weekly', paused: false, trigger: { type: 'manual' } } });
    const one = `/v2/admin/projects/${shop}/automations/${made.body.id}`;
    expect((await call(operator.key, 'GET', `/v2/admin/projects/${shop}/automations`)).body.automations).toEqual([expect.objectContaining({ id: made.body.id })]);
    expect(await call(operator.key, 'PATCH', one, { name: 'weekly tidy' })).toMatchObject({ status: 200, body: { name: 'weekly tidy' } });
    expect(await call(operator.key, 'POST', `${one}/pause`)).toMatchObject({ status: 200, body: { paused: true } });
    expect(await call(operator.key, 'POST', `${one}/resume`)).toMatchObject({ status: 200, body: { paused: false } });
    expect(await call(operator.key, 'GET', `${one}/runs`)).toMatchObject({ status: 200, body: { runs: [] } });
    // The agent API's validation, unchanged: a cron Temporal cannot read is the same 400.
    expect(
      await call(operator.key, 'POST', `/v2/admin/projects/${shop}/automations`, { name: 'x', trigger: { type: 'schedule', cron: 'nope' }, instruction: 'x', output: 'pull_request' }),
    ).toMatchObject({
      status: 400,
      body: { code: 'invalid_argument' },
    });
    expect(await call(operator.key, 'DELETE', one)).toMatchObject({ status: 200, body: { deleted: true } });
  });

  it("a project's admin key runs its own project's operations; another project's are 404 in the error shape", async () => {
    expect(await call(webAdmin.key, 'POST', `/v2/admin/projects/${web}/cache/clear`)).toMatchObject({ status: 200, body: { id: web } });
    const made = await call(webAdmin.key, 'POST', `/v2/admin/projects/${web}/automations`, { name: 'mine', trigger: { type: 'manual' }, instruction: 'x', output: 'pull_request' });
    expect(made.status).toBe(201);
    expect((await call(webAdmin.key, 'GET', `/v2/admin/projects/${web}/automations`)).body.automations).toEqual([expect.objectContaining({ id: made.body.id })]);
    expect(await call(webAdmin.key, 'POST', `/v2/admin/docs/${webDomain}/follow`, { repository: 'acme/web-docs', firstNow: false })).toMatchObject({ status: 200 });
    expect(await call(webAdmin.key, 'GET', `/v2/admin/docs/${webDomain}`)).toMatchObject({ status: 200, body: { source: { repository: 'acme/web-docs' } } });
    const notFound = { status: 404, body: { error: expect.any(String), code: 'not_found' } };
    for (const [method, path] of [
      ['POST', `/v2/admin/projects/${shop}/cache/clear`],
      ['POST', `/v2/admin/projects/${shop}/github/webhook-secret`],
      ['GET', `/v2/admin/projects/${shop}/automations`],
      ['GET', `/v2/admin/projects/${shop}/keys`],
      ['GET', `/v2/admin/docs/${shopDomain}`],
      ['POST', `/v2/admin/docs/${shopDomain}/sync`],
      ['DELETE', `/v2/admin/docs/${shopDomain}/follow`],
      ['GET', '/v2/admin/docs/nobodys.opsapi.test'],
    ] as const)
      expect(await call(webAdmin.key, method, path)).toMatchObject(notFound);
    expect(await call(webAdmin.key, 'POST', `/v2/admin/projects/${shop}/automations`, { name: 'x', trigger: { type: 'manual' }, instruction: 'x', output: 'pull_request' })).toMatchObject(notFound);
    expect(await call(webAdmin.key, 'GET', '/v2/admin/audit')).toMatchObject({ status: 403, body: { error: expect.any(String), code: 'permission_denied' } });
  });

  it('the audit log shows refused calls too: a body the schema refuses, a bad key, a key of the wrong kind', async () => {
    const auditor = await gw.deps.keys.create({ kind: 'admin', orgId: `org-${run}`, projectId: web });
    expect(await call(auditor.key, 'POST', `/v2/admin/projects/${web}/keys`, { kind: 'root', id: 'evil' })).toMatchObject({ status: 400, body: { code: 'invalid_argument' } });
    expect(await call(auditor.key, 'POST', `/v2/admin/projects/${web}/keys`, undefined, '{not json')).toMatchObject({ status: 400 });
    expect(await call(auditor.key, 'POST', '/v2/admin/orgs', { id: `o-${run}` })).toMatchObject({ status: 403 });
    const entries = await auditOf(auditor.id);
    expect(entries.map((e) => `${e.method} ${e.route} ${e.status}`)).toEqual([
      'POST /v2/admin/orgs 403',
      'POST /v2/admin/projects/{projectId}/keys 400',
      'POST /v2/admin/projects/{projectId}/keys 400',
    ]);
    expect(entries[2]).toMatchObject({ keyKind: 'admin', targets: { projectId: web, id: 'evil', kind: 'root' }, clientAddress: expect.any(String), at: expect.any(String) });
    // A key that is not one: no key id to name, but the call, its target, where it came from and the 401 are there.
    const before = (await call(operator.key, 'GET', '/v2/admin/audit?limit=1')).body.entries[0].id as string;
    expect(await call('docent_op_notakey', 'POST', '/v2/admin/orgs', { id: 'x' })).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    const newest = (await call(operator.key, 'GET', '/v2/admin/audit?limit=20')).body.entries as Record<string, any>[];
    const refused = newest
      .slice(
        0,
        newest.findIndex((e) => e.id === before),
      )
      .find((e) => e.status === 401);
    expect(refused).toMatchObject({ method: 'POST', route: '/v2/admin/orgs', targets: { id: 'x' }, clientAddress: expect.any(String) });
    expect(refused).not.toHaveProperty('keyId');
  });

  it('/openapi.json lists the operator routes with their credentials and response schemas', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, any>>; components: { securitySchemes: Record<string, unknown> } };
    expect(doc.components.securitySchemes.operatorKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/v2/admin/orgs']!.post.security).toEqual([{ operatorKey: [] }]);
    expect(doc.paths['/v2/admin/audit']!.get.security).toEqual([{ operatorKey: [] }]);
    expect(doc.paths['/v2/admin/projects/{projectId}/keys']!.post.security).toEqual([{ operatorKey: [] }, { adminKey: [] }]);
    expect(doc.paths['/v2/admin/projects/{projectId}/keys']!.post.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/AdminCreatedKey' });
    expect(doc.paths['/v2/admin/docs/{domain}']!.get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/DocsSyncStatus' });
    expect(doc.paths['/v2/admin/projects/{projectId}/automations']!.post.security).toEqual([{ operatorKey: [] }, { adminKey: [] }]);
    for (const [path, methods] of Object.entries(doc.paths).filter(([p]) => p.startsWith('/v2/admin/')))
      for (const [method, op] of Object.entries(methods)) {
        expect([path, method, op.security.length]).toEqual([path, method, expect.any(Number)]);
        expect(op.security.length).toBeGreaterThan(0);
        const success = Object.keys(op.responses).filter((s) => s.startsWith('2'));
        expect([path, method, success.map((s) => Object.keys(op.responses[s].content?.['application/json']?.schema ?? {}).length > 0)]).toEqual([path, method, [true]]);
      }
  });
});
