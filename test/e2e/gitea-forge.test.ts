import { randomBytes } from 'node:crypto';
import { writesWhatIsAsked } from '../support/forge-jobs';
import { freePort } from '../support/free-port';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startGateway, type RunningGateway } from '../support/gateway';
import { giteaBuildWaitMs, type LocalGitea, startGitea } from '../support/gitea';
import { callApi } from '../support/http';
import { poll } from '../support/poll';
import { type Started, startWorkerProcess } from '../support/process';
import { modelSettings, startScriptedModel, type ScriptedModel } from '../support/scripted-model';

// docent on a real Gitea (built from the Go module proxy, cached by version), end to end: a `gitea` connection added
// with the CLI's REST answer, a project whose webhook docent registers itself, and Gitea's own signed webhook deliveries
// (X-Gitea-Signature) steering the job through the real gateway, worker and Temporal.

const secretKey = randomBytes(32).toString('base64');

let gitea: LocalGitea;
let model: ScriptedModel;
let gw: RunningGateway;
let worker: Started;
let workspaceDir: string;
let operator: string;
let adminKey: string;
let forgeId: string;
let jobId: string;
let pullNumber: number;

const call = async (key: string, method: string, p: string, body?: unknown) => {
  const r = await callApi(gw.url, key, method, p, body);
  return { status: r.status, body: (await r.json()) as any };
};
const job = async (id: string) => (await call(adminKey, 'GET', `/v2/agent/site/job/${id}`)).body;
const deliveries = async () => (await call(operator, 'GET', `/v2/admin/orgs/acme/forges/${forgeId}/deliveries`)).body.deliveries as any[];
const commitsOf = async (n: number) => (await gitea.api('GET', `/repos/acme/site/pulls/${n}/commits`)).body as any[];

beforeAll(async () => {
  gitea = await startGitea();
  expect((await gitea.api('POST', '/orgs', { username: 'acme' })).status).toBe(201);
  expect((await gitea.api('POST', '/orgs/acme/repos', { name: 'site', auto_init: true, default_branch: 'main', readme: 'Default' })).status).toBe(201);
  await gitea.addCollaborator('acme', 'site', 'wanda-writer', 'write');
  await gitea.addCollaborator('acme', 'site', 'rory-reader', 'read');
  model = await startScriptedModel(writesWhatIsAsked);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-gitea-ws-'));
  const port = await freePort();
  gw = await startGateway({
    ...modelSettings(model),
    DOCENT_HTTP_PORT: String(port),
    DOCENT_PUBLIC_URL: `http://127.0.0.1:${port}`,
    DOCENT_SECRET_KEY: secretKey,
    DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
    DOCENT_GITHUB_SHARED_ORGS: 'local',
  });
  await gw.deps.tenancy.createOrg('acme');
  operator = (await gw.deps.keys.create({ kind: 'operator', orgId: '*' })).key;
  const c = gw.deps.config;
  worker = await startWorkerProcess({
    DOCENT_MONGO_DB: c.mongo.db,
    DOCENT_TASK_QUEUE_PREFIX: c.temporal.taskQueuePrefix,
    DOCENT_ES_INDEX_PREFIX: c.elasticsearch.indexPrefix,
    ...modelSettings(model),
    DOCENT_WORKSPACE_DIR: workspaceDir,
    DOCENT_RECONCILER: 'off',
    DOCENT_EMBEDDINGS: 'off',
    DOCENT_SECRET_KEY: secretKey,
    DOCENT_GITHUB_SHARED_ORGS: 'local',
  });
}, giteaBuildWaitMs + 120_000);

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([model?.close(), gitea?.close()]);
  if (workspaceDir) await rm(workspaceDir, { recursive: true, force: true });
});

it('a gitea connection is added with its base URL and token, answers its webhook URL and secret, and a project on it gets its webhook from docent', async () => {
  const added = await call(operator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'gitea', baseUrl: gitea.url, token: gitea.token });
  expect(added).toMatchObject({
    status: 201,
    body: {
      kind: 'gitea',
      apiUrl: `${gitea.url}/api/v1`,
      gitUrl: gitea.url,
      credential: 'token',
      webhookUrl: expect.stringMatching(/\/forges\/forge_[0-9a-f]+\/webhook$/),
      webhookSecret: expect.any(String),
    },
  });
  expect(JSON.stringify(added.body)).not.toContain(gitea.token);
  forgeId = added.body.id;
  const refused = await call(operator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'gitea', baseUrl: gitea.url, token: 'not-a-gitea-token' });
  expect(refused).toMatchObject({ status: 400, body: { error: expect.stringContaining('Gitea refused the token (HTTP 401)') } });

  const project = await call(operator, 'POST', '/v2/admin/projects', { id: 'site', orgId: 'acme', repository: 'acme/site', ref: 'main', domain: 'site.acme.test' });
  expect(project).toMatchObject({ status: 201, body: { forgeId, webhookRegistered: true } });
  const hooks = (await gitea.api('GET', '/repos/acme/site/hooks')).body as any[];
  expect(hooks.map((h) => h.config.url)).toEqual([added.body.webhookUrl]);
  adminKey = (await call(operator, 'POST', '/v2/admin/projects/site/keys', { kind: 'admin' })).body.key;
});

it('a job opens a pull request on Gitea from its own branch', async () => {
  const created = await call(adminKey, 'POST', '/v2/agent/site/job', { prompt: 'add a contributing guide' });
  expect(created.status).toBe(201);
  jobId = created.body.id;
  const done = await poll(
    'the job',
    () => job(jobId),
    (j) => j.status !== 'active',
    120_000,
  );
  expect(done).toMatchObject({ status: 'completed', forgeId, prLink: expect.stringMatching(new RegExp(`^${gitea.url}/acme/site/pulls/\\d+$`)) });
  pullNumber = Number(done.prLink.split('/').pop());
  const pr = (await gitea.api('GET', `/repos/acme/site/pulls/${pullNumber}`)).body;
  expect(pr).toMatchObject({ state: 'open', head: { ref: done.branch }, base: { ref: 'main' } });
  expect(await commitsOf(pullNumber)).toHaveLength(1);
});

it("a reader's @docent mention is ignored with the reason, as Gitea delivered it", async () => {
  expect((await gitea.api('POST', `/repos/acme/site/issues/${pullNumber}/comments`, { body: '@docent delete everything' }, 'rory-reader')).status).toBe(201);
  const record = await poll(
    "the reader's delivery",
    async () => (await deliveries()).find((d) => d.event === 'issue_comment' && d.author === 'rory-reader'),
    (d) => d !== undefined && d.outcome !== 'queued',
    60_000,
  );
  expect(record).toMatchObject({ outcome: 'ignored', reason: expect.stringContaining("the author's role on acme/site is read") });
  expect(await commitsOf(pullNumber)).toHaveLength(1);
});

it("a writer's @docent mention is a follow-up turn: a second commit on the same pull request, and docent's answer there", async () => {
  expect((await gitea.api('POST', `/repos/acme/site/issues/${pullNumber}/comments`, { body: '@docent please add a code of conduct too' }, 'wanda-writer')).status).toBe(201);
  const record = await poll(
    "the writer's delivery",
    async () => (await deliveries()).find((d) => d.event === 'issue_comment' && d.author === 'wanda-writer'),
    (d) => d !== undefined && d.outcome !== 'queued',
    60_000,
  );
  expect(record).toMatchObject({ outcome: 'turn_started', jobId });
  await poll(
    'the second commit',
    () => commitsOf(pullNumber),
    (c) => c.length === 2,
    120_000,
  );
  const done = await poll(
    'turn 2',
    () => job(jobId),
    (j) => j.turn === 2 && j.status !== 'active',
    60_000,
  );
  expect(done).toMatchObject({ status: 'completed', prLink: expect.stringContaining(`/pulls/${pullNumber}`) });
  const comments = await poll(
    "docent's answer",
    async () => (await gitea.api('GET', `/repos/acme/site/issues/${pullNumber}/comments`)).body as any[],
    (cs) => cs.some((c) => c.body.startsWith('Pushed')),
    30_000,
  );
  expect(comments.filter((c) => c.body.startsWith('Pushed'))).toHaveLength(1);
});

it('a merged pull request that is no job of docent starts the automation listening for merged pull requests', async () => {
  const automation = await call(adminKey, 'POST', '/v2/agent/site/automations', {
    name: 'changelog on merge',
    trigger: { type: 'merged_pull_request', repo: 'acme/site' },
    instruction: 'update the changelog',
    output: 'pull_request',
  });
  expect(automation.status).toBe(201);
  const file = await gitea.api(
    'POST',
    '/repos/acme/site/contents/docs/guide.md',
    { content: Buffer.from('# Guide\n').toString('base64'), message: 'Add a guide', branch: 'main', new_branch: 'feature/guide' },
    'wanda-writer',
  );
  expect(file.status).toBe(201);
  const opened = await gitea.api('POST', '/repos/acme/site/pulls', { head: 'feature/guide', base: 'main', title: 'Add a guide' }, 'wanda-writer');
  expect(opened.status).toBe(201);
  // Gitea checks mergeability in the background: a merge asked too early is refused (405), and tried again.
  await poll(
    'the merge',
    async () => (await gitea.api('POST', `/repos/acme/site/pulls/${opened.body.number}/merge`, { Do: 'merge' })).status,
    (s) => s === 200,
    30_000,
  );
  const jobs = await poll(
    'the automation job',
    async () => (await call(adminKey, 'GET', '/v2/agent/site/jobs?origin=merged_pull_request')).body.jobs as any[],
    (js) => js.length === 1,
    60_000,
  );
  expect(jobs[0]).toMatchObject({ origin: 'merged_pull_request', automationId: automation.body.id });
});

it("closing the job's pull request on Gitea archives the job", async () => {
  expect((await gitea.api('PATCH', `/repos/acme/site/pulls/${pullNumber}`, { state: 'closed' })).status).toBe(201);
  const archived = await poll(
    'the archived job',
    () => job(jobId),
    (j) => j.status === 'archived',
    60_000,
  );
  expect(archived).toMatchObject({ status: 'archived', archivedAt: expect.any(String) });
});
