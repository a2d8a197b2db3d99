import { randomBytes } from 'node:crypto';
import { runDocentIn } from '../support/cli';
import { startGateway, type RunningGateway } from '../support/gateway';

// The operator API under /v2/admin over the real gateway: operator keys (all organizations or one) and project admin keys.
let gw: RunningGateway;
let operator: string;
let acmeOperator: string;

const call = async (key: string | undefined, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { ...(key && { authorization: `Bearer ${key}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

beforeAll(async () => {
  gw = await startGateway({ DOCENT_SECRET_KEY: randomBytes(32).toString('base64'), DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8' });
  operator = (await gw.deps.keys.create({ kind: 'operator', orgId: '*' })).key;
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createOrg('globex');
  await gw.deps.tenancy.createProject({ _id: 'globex-site', orgId: 'globex', repository: 'globex/site', ref: 'main' });
  acmeOperator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'acme' })).key;
});
afterAll(() => gw.stop());

describe('operator API', () => {
  it('an operator key makes an organization, a project, a key shown once, a webhook and a secret listed by name', async () => {
    expect(await call(operator, 'POST', '/v2/admin/orgs', { id: 'initech' })).toMatchObject({ status: 201, body: { id: 'initech' } });
    const project = await call(operator, 'POST', '/v2/admin/projects', { id: 'tps', orgId: 'initech', repository: 'initech/tps', ref: 'main', domain: 'docs.initech.test' });
    expect(project).toMatchObject({ status: 201, body: { id: 'tps', orgId: 'initech', domain: 'docs.initech.test' } });
    const key = await call(operator, 'POST', '/v2/admin/projects/tps/keys', { kind: 'admin' });
    expect(key).toMatchObject({ status: 201, body: { kind: 'admin', projectId: 'tps', key: expect.stringMatching(/^docent_admin_/) } });
    const listed = await call(operator, 'GET', '/v2/admin/projects/tps/keys');
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(key.body.key as string);
    expect(listed.body.keys).toEqual([expect.objectContaining({ id: key.body.id, kind: 'admin' })]);
    const hook = await call(operator, 'POST', '/v2/admin/projects/tps/webhooks', { url: 'https://127.0.0.1:9/hook' });
    expect(hook).toMatchObject({ status: 201, body: { url: 'https://127.0.0.1:9/hook', secret: expect.stringMatching(/^whsec_/) } });
    expect((await call(operator, 'GET', '/v2/admin/projects/tps/webhooks')).body.webhooks).toEqual([expect.objectContaining({ id: hook.body.id })]);
    expect(await call(operator, 'POST', '/v2/admin/projects/tps/secrets', { name: 'NPM_TOKEN', value: 'npm_s3cr3t_value' })).toMatchObject({ status: 200, body: { name: 'NPM_TOKEN' } });
    const secrets = await call(operator, 'GET', '/v2/admin/projects/tps/secrets');
    expect(secrets).toMatchObject({ status: 200, body: { secrets: [{ name: 'NPM_TOKEN', updatedAt: expect.any(String) }] } });
    expect(JSON.stringify(secrets.body)).not.toContain('npm_s3cr3t_value');
    expect(await call(operator, 'PATCH', '/v2/admin/projects/tps', { check: ['npm test'], network: true })).toMatchObject({ status: 200, body: { checkCommands: ['npm test'], sandboxNetwork: true } });
    expect(await call(operator, 'GET', '/v2/admin/projects/tps')).toMatchObject({ status: 200, body: { id: 'tps', checkCommands: ['npm test'] } });
    expect(await call(operator, 'DELETE', `/v2/admin/projects/tps/keys/${key.body.id}`)).toMatchObject({ status: 200, body: { revoked: true } });
  });

  it("an organization's operator key sees its own organization and gets 404 on another's project", async () => {
    expect(await call(acmeOperator, 'POST', '/v2/admin/projects', { id: 'acme-web', orgId: 'acme', repository: 'acme/web', ref: 'main', domain: 'web.acme.test' })).toMatchObject({ status: 201 });
    expect(await call(acmeOperator, 'GET', '/v2/admin/projects/globex-site')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call(acmeOperator, 'POST', '/v2/admin/projects/globex-site/keys', { kind: 'admin' })).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call(acmeOperator, 'POST', '/v2/admin/projects', { id: 'sneaky', orgId: 'globex', repository: 'acme/web', ref: 'main', domain: 'x.globex.test' })).toMatchObject({ status: 404 });
    expect(await call(acmeOperator, 'POST', '/v2/admin/orgs', { id: 'another' })).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
    expect((await call(acmeOperator, 'GET', '/v2/admin/orgs')).body).toEqual({ orgs: [{ id: 'acme', createdAt: expect.any(String) }] });
    const listed = (await call(acmeOperator, 'GET', '/v2/admin/projects')).body.projects as { id: string; orgId: string }[];
    expect(listed.map((p) => p.orgId)).toEqual(expect.arrayContaining(['acme']));
    expect(listed.every((p) => p.orgId === 'acme')).toBe(true);
    expect(await call(acmeOperator, 'GET', '/v2/admin/projects?orgId=globex')).toMatchObject({ status: 404 });
    expect(((await call(operator, 'GET', '/v2/admin/projects?orgId=globex')).body.projects as { id: string }[]).map((p) => p.id)).toEqual(['globex-site']);
  });

  it("a project's admin key administers its own project only; assistant keys and no key are refused", async () => {
    await gw.deps.tenancy.createProject({ _id: 'acme-docs', orgId: 'acme', repository: 'acme/docs', ref: 'main', domain: 'docs.acme.test' });
    const admin = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'acme-docs' })).key;
    expect(await call(admin, 'POST', '/v2/admin/projects/acme-docs/keys', { kind: 'assistant' })).toMatchObject({ status: 201, body: { key: expect.stringMatching(/^docent_asst_/) } });
    expect(await call(admin, 'GET', '/v2/admin/projects/acme-docs/secrets')).toMatchObject({ status: 200 });
    expect(await call(admin, 'GET', '/v2/admin/projects/globex-site')).toMatchObject({ status: 404 });
    expect(await call(admin, 'POST', '/v2/admin/projects', { id: 'more', orgId: 'acme', repository: 'acme/x', ref: 'main', domain: 'more.acme.test' })).toMatchObject({ status: 403 });
    const assistant = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', projectId: 'acme-docs', domain: 'docs.acme.test' })).key;
    expect(await call(assistant, 'GET', '/v2/admin/projects/acme-docs')).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
    expect(await call(undefined, 'GET', '/v2/admin/projects/acme-docs')).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
  });

  it('writes every call to the audit log, newest first with who, what and the result, paged by a cursor, without keys or secret values', async () => {
    const own = await gw.deps.keys.create({ kind: 'operator', orgId: '*' });
    await call(own.key, 'POST', '/v2/admin/orgs', { id: 'audited' });
    await call(own.key, 'POST', '/v2/admin/projects', { id: 'aud-p', orgId: 'audited', repository: 'audited/p', ref: 'main', domain: 'p.audited.test' });
    await call(own.key, 'POST', '/v2/admin/projects/aud-p/secrets', { name: 'API_TOKEN', value: 'tok_very_secret_1' });
    await call(own.key, 'GET', '/v2/admin/projects/nope');
    const first = await call(own.key, 'GET', '/v2/admin/audit?limit=3');
    expect(first.status).toBe(200);
    expect(first.body.entries).toEqual([
      expect.objectContaining({
        keyId: own.id,
        keyKind: 'operator',
        method: 'GET',
        route: '/v2/admin/projects/{projectId}',
        targets: { projectId: 'nope' },
        status: 404,
        clientAddress: expect.any(String),
        at: expect.any(String),
      }),
      expect.objectContaining({ keyId: own.id, method: 'POST', route: '/v2/admin/projects/{projectId}/secrets', targets: { projectId: 'aud-p', name: 'API_TOKEN' }, status: 200 }),
      expect.objectContaining({ keyId: own.id, method: 'POST', route: '/v2/admin/projects', targets: { id: 'aud-p', orgId: 'audited' }, status: 201 }),
    ]);
    const second = await call(own.key, 'GET', `/v2/admin/audit?limit=1&cursor=${first.body.next as string}`);
    expect(second.body.entries).toEqual([expect.objectContaining({ method: 'POST', route: '/v2/admin/orgs', targets: { id: 'audited' }, status: 201 })]);
    const everything = JSON.stringify((await call(own.key, 'GET', '/v2/admin/audit?limit=200')).body);
    for (const secret of [own.key, operator, acmeOperator, 'tok_very_secret_1', 'npm_s3cr3t_value']) expect(everything).not.toContain(secret);
    expect(everything).toContain('"status":401'); // the call without a key is there too
    expect(await call(acmeOperator, 'GET', '/v2/admin/audit')).toMatchObject({ status: 403 });
    expect(await call(own.key, 'GET', '/v2/admin/audit?limit=0')).toMatchObject({ status: 400, body: { code: 'invalid_argument' } });
  });

  it('the CLI administers with only DOCENT_API_URL and DOCENT_OPERATOR_KEY in its environment, and each call is in the audit log', async () => {
    const own = await gw.deps.keys.create({ kind: 'operator', orgId: '*' });
    // Nothing else: no DOCENT_MONGO_*, so a command that fell back to the database would use the default URL and
    // database (docent), where the test looks afterwards, and would leave no audit entry.
    const env = { DOCENT_API_URL: gw.url, DOCENT_OPERATOR_KEY: own.key };
    const docent = (...args: string[]) => runDocentIn(args, env);
    expect(await docent('org', 'create', 'cli-org')).toMatchObject({ code: 0, stdout: 'created organization cli-org\n' });
    expect(await docent('project', 'create', 'cli-p', '--org', 'cli-org', '--repo', 'cli-org/p', '--ref', 'main', '--domain', 'p.cli.test')).toMatchObject({ code: 0 });
    const key = await docent('key', 'create', '--project', 'cli-p', '--kind', 'admin');
    expect(key.stdout).toMatch(/^docent_admin_\S+\n$/);
    expect((await gw.deps.keys.authenticate(`Bearer ${key.stdout.trim()}`, 'admin')).projectId).toBe('cli-p');
    const hook = await docent('webhook', 'create', '--project', 'cli-p', '--url', 'https://127.0.0.1:9/cli');
    expect(hook).toMatchObject({ code: 0, stdout: expect.stringMatching(/^whsec_/) });
    expect((await docent('webhook', 'list', '--project', 'cli-p')).stdout).toContain('https://127.0.0.1:9/cli');
    expect(await docent('project', 'create', 'cli-q', '--org', 'no-such-org', '--repo', 'x/y', '--ref', 'main', '--domain', 'q.cli.test')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('organization no-such-org not found'),
    });
    expect(
      await gw.deps.mongo.client
        .db('docent')
        .collection('orgs')
        .findOne({ _id: 'cli-org' as never }),
    ).toBeNull();
    const log = (await call(own.key, 'GET', '/v2/admin/audit?limit=50')).body.entries as { keyId: string; method: string; route: string; status: number }[];
    expect(log.filter((e) => e.keyId === own.id).map((e) => `${e.method} ${e.route} ${e.status}`)).toEqual([
      'POST /v2/admin/projects 404',
      'GET /v2/admin/projects/{projectId}/webhooks 200',
      'POST /v2/admin/projects/{projectId}/webhooks 201',
      'POST /v2/admin/projects/{projectId}/keys 201',
      'POST /v2/admin/projects 201',
      'POST /v2/admin/orgs 201',
    ]);
  });

  it('the CLI runs the cache, key list, docs and automation commands through the API with the same environment', async () => {
    const own = await gw.deps.keys.create({ kind: 'operator', orgId: '*' });
    const docent = (...args: string[]) => runDocentIn(args, { DOCENT_API_URL: gw.url, DOCENT_OPERATOR_KEY: own.key });
    await gw.deps.tenancy.createProject({ _id: 'cli-r', orgId: 'acme', repository: 'acme/r', ref: 'main', domain: 'r.cli.test' });
    expect(await docent('project', 'cache', 'clear', 'cli-r')).toMatchObject({ code: 0, stdout: expect.stringContaining('cache generation 1') });
    expect(await docent('key', 'list', '--project', 'cli-r')).toMatchObject({ code: 0, stdout: 'project cli-r has no keys\n' });
    expect(await docent('docs', 'status', '--domain', 'r.cli.test')).toMatchObject({ code: 1, stderr: expect.stringContaining('r.cli.test is not followed') });
    expect(await docent('automation', 'create', '--project', 'cli-r', '--name', 'by hand', '--trigger', 'manual', '--instruction', 'Tidy up')).toMatchObject({ code: 0 });
    expect(await docent('automation', 'list', '--project', 'cli-r')).toMatchObject({ code: 0, stdout: expect.stringContaining('manual  "by hand"') });
    const log = (await call(own.key, 'GET', '/v2/admin/audit?limit=50')).body.entries as { keyId: string; method: string; route: string; status: number }[];
    expect(log.filter((e) => e.keyId === own.id).map((e) => `${e.method} ${e.route} ${e.status}`)).toEqual([
      'GET /v2/admin/projects/{projectId}/automations 200',
      'POST /v2/admin/projects/{projectId}/automations 201',
      'GET /v2/admin/docs/{domain} 404',
      'GET /v2/admin/projects/{projectId}/keys 200',
      'POST /v2/admin/projects/{projectId}/cache/clear 200',
    ]);
  });
});
