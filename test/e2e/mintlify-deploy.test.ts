import { followDocs, unfollowDocs, type DocsSyncSchedules } from '../../src/docs/sync-schedule';
import { testConfig } from '../support/config';
import { deleteTestIndexes, sameStack, startWorker, type RunningWorker } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';
import { checkAnswer, mintlifyOperations, pathOf, validBodies } from '../support/mintlify-openapi';
import { poll } from '../support/poll';

// Mintlify's docs deploy endpoints (openapi.json of mintlify/docs) over docent's docs sync, with a real worker, real
// Temporal schedules and git over HTTP: an update syncs the followed docs, its status follows the sync to its end.

const token = 'ghs_deploytoken0123456789';
const domain = 'docs.deploy.test';
let git: GitServer;
let config: ReturnType<typeof testConfig>;
let worker: RunningWorker;
let gw: RunningGateway;
let schedules: DocsSyncSchedules;
let admin: string;
let otherAdmin: string;
let asst: string;

beforeAll(async () => {
  git = await startGitServer(token);
  config = testConfig({ DOCENT_GITHUB_GIT_URL: git.url, DOCENT_GITHUB_TOKEN: token });
  await git.createRepo('acme', 'deploy-docs', { 'docs/install.md': '# Installing the kiln\n\nRun kiln setup to install the furnace controller.\n' });
  worker = await startWorker(config);
  gw = await startGateway(sameStack(config, { DOCENT_GITHUB_GIT_URL: git.url, DOCENT_GITHUB_TOKEN: token }));
  schedules = { temporal: gw.deps.temporal, taskQueuePrefix: config.temporal.taskQueuePrefix, gitBaseUrl: git.url };
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'kiln', orgId: 'acme', repository: 'acme/deploy-docs', ref: 'main', domain });
  await gw.deps.tenancy.createProject({ _id: 'other', orgId: 'acme', repository: 'acme/other', ref: 'main', domain: 'docs.unfollowed.test' });
  admin = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'kiln' })).key;
  otherAdmin = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'other' })).key;
  asst = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  await followDocs(schedules, { domain, repository: 'acme/deploy-docs', ref: 'main', docsPath: 'docs' }, 3_600_000, { firstNow: false });
});

afterAll(async () => {
  await unfollowDocs(schedules, domain).catch(() => undefined);
  await gw?.stop();
  await worker?.stop();
  await deleteTestIndexes(config);
  await git?.close();
});

const status = async (id: string, key = admin) => {
  const r = await callApi(gw.url, key, 'GET', `/v1/project/update-status/${id}`);
  return { status: r.status, type: r.headers.get('content-type'), body: await r.json() };
};
const finished = (id: string) =>
  poll(
    'the update to end',
    () => status(id),
    (s) => ['success', 'failure'].includes(s.body.status),
    90_000,
  );

describe('POST /v1/project/update/{projectId} and GET /v1/project/update-status/{statusId}', () => {
  it('syncs the followed docs: 202 with a status id, followed from queued or in progress to success, and the docs are searchable', async () => {
    const r = await callApi(gw.url, admin, 'POST', '/v1/project/update/kiln');
    expect(r.status).toBe(202);
    const { statusId } = await r.json();
    expect(statusId).toMatch(/^upd_/);
    expect(['queued', 'in_progress', 'success']).toContain((await status(statusId)).body.status);
    const done = await finished(statusId);
    expect(done.body).toEqual({
      _id: statusId,
      projectId: 'kiln',
      createdAt: expect.any(String),
      endedAt: expect.any(String),
      status: 'success',
      summary: expect.stringMatching(/^indexed 1 pages/),
      logs: [done.body.summary],
      subdomain: domain,
    });
    const found = await callApi(gw.url, asst, 'POST', `/discovery/v1/search/${domain}`, { query: 'furnace controller' });
    expect(((await found.json()) as Array<{ path: string }>).map((p) => p.path)).toContain('install');
  });

  it('reads as Mintlify documents it, with each documented request', async () => {
    const ops = mintlifyOperations().filter((o) => o.path.startsWith('/v1/project/'));
    expect(ops.map((o) => o.name).sort()).toEqual(['GET /v1/project/update-status/{statusId}', 'POST /v1/project/preview/{projectId}', 'POST /v1/project/update/{projectId}']);
    const update = ops.find((o) => o.name.startsWith('POST /v1/project/update/'))!;
    const queued = await callApi(gw.url, admin, 'POST', pathOf(update, { projectId: 'kiln' }));
    const body = await queued.json();
    expect(checkAnswer(update, queued.status, queued.headers.get('content-type'), body)).toEqual([]);
    const read = ops.find((o) => o.name.startsWith('GET'))!;
    const s = await finished(body.statusId);
    expect(checkAnswer(read, s.status, s.type, s.body)).toEqual([]);
    // Previews: every body Mintlify's schema allows is Mintlify's documented 403, which says why.
    const preview = ops.find((o) => o.name.startsWith('POST /v1/project/preview/'))!;
    for (const b of validBodies(preview)) {
      const r = await callApi(gw.url, admin, 'POST', pathOf(preview, { projectId: 'kiln' }), b);
      const answer = await r.json();
      expect(checkAnswer(preview, r.status, r.headers.get('content-type'), answer)).toEqual([]);
      expect({ status: r.status, error: answer.error }).toEqual({ status: 403, error: expect.stringContaining('preview deployments are not available in docent') });
    }
  });

  it('is 400 for a project that follows no docs, and 404 for an unknown update or another project’s', async () => {
    const unfollowed = await callApi(gw.url, otherAdmin, 'POST', '/v1/project/update/other');
    expect(unfollowed.status).toBe(400);
    expect((await unfollowed.json()).error).toContain('not followed');
    const { statusId } = await (await callApi(gw.url, admin, 'POST', '/v1/project/update/kiln')).json();
    expect(await status(statusId, otherAdmin)).toMatchObject({ status: 404, body: { error: expect.any(String) } });
    expect(await status('upd_nope')).toMatchObject({ status: 404 });
    await finished(statusId);
  });
});
