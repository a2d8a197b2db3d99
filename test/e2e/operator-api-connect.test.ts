import { randomBytes } from 'node:crypto';
import { toJsonString } from '@bufbuild/protobuf';
import { Code, ConnectError, createDocentClient } from '../../src/client';
import { ListAuditEntriesResponseSchema } from '../../src/gen/admin/v1/admin_pb';
import { startGateway, type RunningGateway } from '../support/gateway';

// admin.v1.AdminService through the typed client over the real gateway's socket: the operator API's operations with
// their credentials, the same refusals as REST, and each call in the audit log.
let gw: RunningGateway;
let operator: { id: string; key: string };
const run = randomBytes(3).toString('hex');

const refusal = async (call: Promise<unknown>) => {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return (err as ConnectError).code;
};

beforeAll(async () => {
  gw = await startGateway({ DOCENT_SECRET_KEY: randomBytes(32).toString('base64'), DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8' });
  operator = await gw.deps.keys.create({ kind: 'operator', orgId: '*' });
});
afterAll(() => gw.stop());

describe('admin.v1.AdminService', () => {
  it('an operator key makes an organization, a project, a key shown once, a webhook and a secret, and reads the audit log', async () => {
    const admin = createDocentClient({ baseUrl: gw.url, apiKey: operator.key }).admin;
    const org = `rpc-${run}`;
    expect((await admin.createOrganization({ id: org })).organization).toMatchObject({ id: org });
    const { project } = await admin.createProject({ id: `p-${run}`, orgId: org, repository: 'rpc/p', ref: 'main', domain: `p-${run}.rpc.test` });
    expect(project).toMatchObject({ id: `p-${run}`, orgId: org, domain: `p-${run}.rpc.test`, sandboxNetwork: false });
    expect((await admin.listProjects({ orgId: org })).projects.map((p) => p.id)).toEqual([`p-${run}`]);
    const made = await admin.createKey({ projectId: `p-${run}`, kind: 'admin' });
    expect(made.key).toMatch(/^docent_admin_/);
    expect((await gw.deps.keys.authenticate(`Bearer ${made.key}`, 'admin')).projectId).toBe(`p-${run}`);
    expect((await admin.listKeys({ projectId: `p-${run}` })).keys.map((k) => k.id)).toEqual([made.info!.id]);
    const hook = await admin.createWebhook({ projectId: `p-${run}`, url: 'https://127.0.0.1:9/rpc' });
    expect(hook.secret).toMatch(/^whsec_/);
    expect((await admin.listWebhooks({ projectId: `p-${run}` })).webhooks).toEqual([expect.objectContaining({ id: hook.webhook!.id, url: 'https://127.0.0.1:9/rpc' })]);
    await admin.setSecret({ projectId: `p-${run}`, name: 'NPM_TOKEN', value: 'rpc_s3cret' });
    expect((await admin.listSecrets({ projectId: `p-${run}` })).secrets.map((x) => x.name)).toEqual(['NPM_TOKEN']);
    expect((await admin.listWebhookDeliveries({ projectId: `p-${run}`, webhookId: hook.webhook!.id })).deliveries).toEqual([]);
    const domain = `p-${run}.rpc.test`;
    const followed = await admin.followDocs({ domain, source: { repository: 'rpc/p-docs', docsPath: '/docs/' }, every: '2h', firstNow: false });
    expect(followed).toMatchObject({ source: { repository: 'rpc/p-docs', ref: 'main', docsPath: 'docs' }, everyMs: 7_200_000n, firstSyncStarted: false });
    expect(await admin.getDocsStatus({ domain })).toMatchObject({ source: { repository: 'rpc/p-docs' }, everyMs: 7_200_000n, running: false, followed: true, pages: 0, passages: 0 });
    // The page browser and sync runs refuse what REST refuses; nothing was indexed yet.
    expect(await admin.listDocsPages({ domain })).toMatchObject({ pages: [] });
    expect(await refusal(admin.listDocsPages({ domain, limit: 0 }))).toBe(Code.InvalidArgument);
    expect(await refusal(admin.getDocsPage({ domain, path: '' }))).toBe(Code.InvalidArgument);
    expect(await refusal(admin.getDocsPage({ domain, path: 'guides/none' }))).toBe(Code.NotFound);
    expect(await refusal(admin.getDocsSyncRun({ domain, id: 'not-a-sync' }))).toBe(Code.InvalidArgument);
    expect(await refusal(admin.getDocsSyncRun({ domain, id: 'sync_000000000000000000000000' }))).toBe(Code.NotFound);
    expect(await refusal(admin.followDocs({ domain, source: { repository: 'rpc/x', docsPath: 'docs/../..' } }))).toBe(Code.InvalidArgument);
    await admin.unfollowDocs({ domain });
    expect(await refusal(admin.getDocsStatus({ domain }))).toBe(Code.NotFound);
    expect(await refusal(admin.startDocsSync({ domain }))).toBe(Code.NotFound);
    expect((await admin.clearSetupCache({ projectId: `p-${run}` })).setupCacheGeneration).toBe(1);
    // The same checks as REST's bodies: an organization id REST would refuse is refused here.
    expect(await refusal(admin.createOrganization({ id: 'x'.repeat(65) }))).toBe(Code.InvalidArgument);
    const page = await admin.listAuditEntries({ limit: 200 });
    const mine = page.entries.filter((e) => e.keyId === operator.id).map((e) => `${e.route} ${e.status}`);
    expect(mine.slice(0, 6)).toEqual([
      '/admin.v1.AdminService/CreateOrganization 400',
      '/admin.v1.AdminService/ClearSetupCache 200',
      '/admin.v1.AdminService/StartDocsSync 404',
      '/admin.v1.AdminService/GetDocsStatus 404',
      '/admin.v1.AdminService/UnfollowDocs 200',
      '/admin.v1.AdminService/FollowDocs 400',
    ]);
    expect(mine).toContain('/admin.v1.AdminService/CreateKey 200');
    const setSecret = page.entries.find((e) => e.route === '/admin.v1.AdminService/SetSecret');
    expect(setSecret).toMatchObject({ keyKind: 'operator', targets: { projectId: `p-${run}`, name: 'NPM_TOKEN' }, clientAddress: expect.any(String) });
    for (const secret of [made.key, hook.secret, 'rpc_s3cret', operator.key]) expect(toJsonString(ListAuditEntriesResponseSchema, page)).not.toContain(secret);
  });

  it("a project's admin key calls its own project's operations; another project is NOT_FOUND; a wrong key is refused and audited", async () => {
    await gw.deps.tenancy.createOrg(`own-${run}`);
    for (const id of [`mine-${run}`, `theirs-${run}`]) await gw.deps.tenancy.createProject({ _id: id, orgId: `own-${run}`, repository: 'own/x', ref: 'main', domain: `${id}.rpc.test` });
    const adminKey = await gw.deps.keys.create({ kind: 'admin', orgId: `own-${run}`, projectId: `mine-${run}` });
    const admin = createDocentClient({ baseUrl: gw.url, apiKey: adminKey.key }).admin;
    expect((await admin.getProject({ projectId: `mine-${run}` })).project).toMatchObject({ id: `mine-${run}` });
    expect((await admin.createKey({ projectId: `mine-${run}`, kind: 'assistant' })).key).toMatch(/^docent_asst_/);
    expect(await refusal(admin.getProject({ projectId: `theirs-${run}` }))).toBe(Code.NotFound);
    expect(await refusal(admin.createKey({ projectId: `theirs-${run}`, kind: 'admin' }))).toBe(Code.NotFound);
    expect(await refusal(admin.getDocsStatus({ domain: `theirs-${run}.rpc.test` }))).toBe(Code.NotFound);
    expect(await refusal(admin.createOrganization({ id: `x-${run}` }))).toBe(Code.PermissionDenied);
    expect(await refusal(admin.listAuditEntries({}))).toBe(Code.PermissionDenied);
    const nobody = createDocentClient({ baseUrl: gw.url, apiKey: 'docent_op_unknown' }).admin;
    expect(await refusal(nobody.listOrganizations({}))).toBe(Code.Unauthenticated);
    const operatorClient = createDocentClient({ baseUrl: gw.url, apiKey: operator.key }).admin;
    const entries = (await operatorClient.listAuditEntries({ limit: 200 })).entries;
    expect(entries.filter((e) => e.keyId === adminKey.id).map((e) => `${e.route} ${e.status}`)).toEqual([
      '/admin.v1.AdminService/ListAuditEntries 403',
      '/admin.v1.AdminService/CreateOrganization 403',
      '/admin.v1.AdminService/GetDocsStatus 404',
      '/admin.v1.AdminService/CreateKey 404',
      '/admin.v1.AdminService/GetProject 404',
      '/admin.v1.AdminService/CreateKey 200',
      '/admin.v1.AdminService/GetProject 200',
    ]);
    expect(entries.find((e) => e.route === '/admin.v1.AdminService/ListOrganizations' && e.status === 401)).toBeDefined();
  });
});
