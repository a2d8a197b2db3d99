import { randomBytes } from 'node:crypto';
import { Code, ConnectError, createDocentClient } from '../../src/client';
import { runDocentIn } from '../support/cli';
import { startGateway, type RunningGateway } from '../support/gateway';
import { automationScheduleId } from '../../workflows/automation-run-contract';

// Changing a project's repository and domain, and deleting projects and organizations (issue 55), through the operator
// API and the CLI over the real gateway, MongoDB and Temporal (an automation's schedule goes with its project).
let gw: RunningGateway;
let operator: string;

const call = async (key: string | undefined, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { ...(key && { authorization: `Bearer ${key}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** A project of its own organization, with an admin key and an assistant key. */
async function projectWithKeys(orgId: string, projectId: string, domain: string) {
  expect(await call(operator, 'POST', '/v2/admin/orgs', { id: orgId })).toMatchObject({ status: 201 });
  expect(await call(operator, 'POST', '/v2/admin/projects', { id: projectId, orgId, repository: `${orgId}/site`, ref: 'main', domain })).toMatchObject({ status: 201 });
  const admin = (await call(operator, 'POST', `/v2/admin/projects/${projectId}/keys`, { kind: 'admin' })).body.key as string;
  const assistant = (await call(operator, 'POST', `/v2/admin/projects/${projectId}/keys`, { kind: 'assistant' })).body.key as string;
  return { admin, assistant };
}

const search = (key: string, domain: string) => call(key, 'POST', `/discovery/v1/search/${domain}`, { query: 'install' });

beforeAll(async () => {
  gw = await startGateway({ DOCENT_SECRET_KEY: randomBytes(32).toString('base64') });
  operator = (await gw.deps.keys.create({ kind: 'operator', orgId: '*' })).key;
});
afterAll(() => gw?.stop());

describe("a project's repository and domain", () => {
  it('an operator moves them; the assistant key follows the domain, and a project admin key may not', async () => {
    const { admin, assistant } = await projectWithKeys('mover', 'mover-site', 'old.mover.test');
    expect((await search(assistant, 'old.mover.test')).status).not.toBe(404);
    const moved = await call(operator, 'PATCH', '/v2/admin/projects/mover-site', { repository: 'mover/handbook', ref: 'stable', domain: 'new.mover.test' });
    expect(moved).toMatchObject({ status: 200, body: { repository: 'mover/handbook', ref: 'stable', domain: 'new.mover.test' } });
    expect(await gw.deps.tenancy.getProject('mover-site')).toMatchObject({ repository: 'mover/handbook', ref: 'stable', domain: 'new.mover.test' });
    // The widget's key now works on the new domain and no longer on the old one, which no project serves.
    expect((await search(assistant, 'new.mover.test')).status).toBe(200);
    expect((await search(assistant, 'old.mover.test')).status).toBe(404);
    expect(await call(admin, 'PATCH', '/v2/admin/projects/mover-site', { repository: 'mover/elsewhere' })).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
    // A domain another project serves is taken.
    await projectWithKeys('other-mover', 'other-site', 'taken.mover.test');
    expect(await call(operator, 'PATCH', '/v2/admin/projects/mover-site', { domain: 'taken.mover.test' })).toMatchObject({ status: 409, body: { code: 'already_exists' } });
    const audit = (await call(operator, 'GET', '/v2/admin/audit?limit=20')).body.entries as Array<{
      method: string;
      targets: Record<string, string>;
      status: number;
      changes?: Record<string, unknown>;
    }>;
    expect(audit.find((e) => e.method === 'PATCH' && e.status === 200 && e.targets.projectId === 'mover-site')?.changes).toMatchObject({
      repository: { old: 'mover/site', new: 'mover/handbook' },
      domain: { old: 'old.mover.test', new: 'new.mover.test' },
    });
  });
});

describe('deleting a project', () => {
  it('is refused while a job works, then removes its keys, automations with their schedules, webhooks and secrets, and only for its own organization', async () => {
    const { admin } = await projectWithKeys('doomed', 'doomed-site', 'docs.doomed.test');
    const other = await projectWithKeys('bystander', 'bystander-site', 'docs.bystander.test');
    const schedule = await call(admin, 'POST', '/v2/agent/doomed-site/automations', {
      name: 'nightly',
      instruction: 'tidy the docs',
      output: 'pull_request',
      trigger: { type: 'schedule', cron: '0 3 * * *' },
    });
    expect(schedule.status).toBe(201);
    const scheduleHandle = gw.deps.temporal.schedule.getHandle(automationScheduleId(gw.deps.config.temporal.taskQueuePrefix, schedule.body.id as string));
    await scheduleHandle.describe();
    expect((await call(operator, 'POST', '/v2/admin/projects/doomed-site/webhooks', { url: 'https://hooks.doomed.test/in' })).status).toBe(201);
    expect((await call(operator, 'POST', '/v2/admin/projects/doomed-site/secrets', { name: 'NPM_TOKEN', value: 'npm_doomed_value' })).status).toBe(200);

    // Another organization's operator, and another project's admin key, do not see it.
    const bystanderOperator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'bystander' })).key;
    expect(await call(bystanderOperator, 'DELETE', '/v2/admin/projects/doomed-site')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call(other.admin, 'DELETE', '/v2/admin/projects/doomed-site')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await call(admin, 'DELETE', '/v2/admin/projects/doomed-site')).toMatchObject({ status: 403, body: { code: 'permission_denied' } });

    // A working job holds it back, whole.
    const jobs = gw.deps.mongo.db.collection<{ _id: string; projectId: string; status: string }>('jobs');
    await jobs.insertOne({ _id: 'job_doomed_working', projectId: 'doomed-site', status: 'active' });
    const refused = await call(operator, 'DELETE', '/v2/admin/projects/doomed-site');
    expect(refused).toMatchObject({ status: 400, body: { code: 'failed_precondition', error: expect.stringContaining('1 working job') } });
    expect((await call(admin, 'GET', '/v2/agent/doomed-site/automations')).body.automations).toHaveLength(1);
    await jobs.updateOne({ _id: 'job_doomed_working' }, { $set: { status: 'completed' } });

    const deleted = await call(operator, 'DELETE', '/v2/admin/projects/doomed-site');
    expect(deleted).toMatchObject({ status: 200, body: { id: 'doomed-site', deleted: true, automations: [schedule.body.id], secrets: ['NPM_TOKEN'] } });
    expect(deleted.body.revokedKeys).toHaveLength(2);
    expect(await gw.deps.tenancy.getProject('doomed-site')).toBeNull();
    expect((await call(admin, 'GET', '/v2/agent/doomed-site/jobs')).status).toBe(401);
    await expect(scheduleHandle.describe()).rejects.toThrow(/not found/i);
    for (const collection of ['automations', 'webhook_endpoints', 'project_secrets']) expect(await gw.deps.mongo.db.collection(collection).countDocuments({ projectId: 'doomed-site' })).toBe(0);
    // The other organization's project is untouched.
    expect((await call(other.admin, 'GET', '/v2/agent/bystander-site/jobs')).status).toBe(200);
    const audit = (await call(operator, 'GET', '/v2/admin/audit?limit=10')).body.entries as Array<{ method: string; route: string; status: number }>;
    expect(audit.filter((e) => e.method === 'DELETE' && e.route === '/v2/admin/projects/{projectId}').map((e) => e.status)).toEqual([200, 400, 403, 404, 404]);
  });

  it('the CLI says what goes and deletes only with --yes; an organization goes once it has no projects', async () => {
    await projectWithKeys('cli-doomed', 'cli-doomed-site', 'docs.cli-doomed.test');
    const docent = (...args: string[]) => runDocentIn(args, { DOCENT_API_URL: gw.url, DOCENT_OPERATOR_KEY: operator });
    const asked = await docent('project', 'delete', 'cli-doomed-site');
    expect(asked).toMatchObject({ code: 2, stderr: expect.stringContaining('needs --yes. Deletes the project: its keys are revoked') });
    expect(await gw.deps.tenancy.getProject('cli-doomed-site')).not.toBeNull();
    expect(await docent('org', 'delete', 'cli-doomed', '--yes')).toMatchObject({ code: 1, stderr: expect.stringContaining('still has projects (cli-doomed-site)') });
    expect(await docent('project', 'delete', 'cli-doomed-site', '--yes')).toMatchObject({ code: 0, stdout: expect.stringContaining('deleted project cli-doomed-site: revoked 2 keys') });
    const orgOperator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'cli-doomed' })).key;
    expect(await docent('org', 'delete', 'cli-doomed', '--yes')).toMatchObject({ code: 0, stdout: expect.stringContaining('deleted organization cli-doomed') });
    expect(await gw.deps.tenancy.hasOrg('cli-doomed')).toBe(false);
    expect((await call(orgOperator, 'GET', '/v2/admin/projects')).status).toBe(401);
  });

  it('over Connect (admin.v1.AdminService) the deletes refuse and answer as REST does', async () => {
    await projectWithKeys('rpc-doomed', 'rpc-doomed-site', 'docs.rpc-doomed.test');
    const orgOperator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'rpc-doomed' })).key;
    const stranger = (await gw.deps.keys.create({ kind: 'operator', orgId: 'bystander' })).key;
    const codeOf = (call: Promise<unknown>) =>
      call.then(
        () => 'ok',
        (err: unknown) => (err instanceof ConnectError ? Code[err.code] : String(err)),
      );
    expect(await codeOf(createDocentClient({ baseUrl: gw.url, apiKey: stranger }).admin.deleteProject({ projectId: 'rpc-doomed-site' }))).toBe('NotFound');
    const admin = createDocentClient({ baseUrl: gw.url, apiKey: orgOperator }).admin;
    expect(await codeOf(admin.deleteOrganization({ id: 'rpc-doomed' }))).toBe('PermissionDenied');
    const deleted = await admin.deleteProject({ projectId: 'rpc-doomed-site' });
    expect(deleted.revokedKeyIds).toHaveLength(2);
    expect(await gw.deps.tenancy.getProject('rpc-doomed-site')).toBeNull();
    const all = createDocentClient({ baseUrl: gw.url, apiKey: operator }).admin;
    expect((await all.deleteOrganization({ id: 'rpc-doomed' })).revokedKeyIds).toEqual([expect.any(String)]);
    expect(await gw.deps.tenancy.hasOrg('rpc-doomed')).toBe(false);
  });
});
