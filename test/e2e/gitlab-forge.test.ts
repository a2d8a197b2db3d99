import { randomBytes } from 'node:crypto';
import { writesWhatIsAsked } from '../support/forge-jobs';
import { freePort } from '../support/free-port';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDocentClient } from '../../src/client';
import { runDocentIn } from '../support/cli';
import { startGateway, type RunningGateway } from '../support/gateway';
import { access, type GitLabDouble, startGitLabDouble } from '../support/gitlab-double';
import { callApi } from '../support/http';
import { poll } from '../support/poll';
import { type Started, startWorkerProcess } from '../support/process';
import { modelSettings, startScriptedModel, type ScriptedModel } from '../support/scripted-model';

// docent on GitLab (a double at the HTTP boundary that answers as GitLab REST v4 does, git through the real test git
// server), end to end: a `gitlab` connection added with its base URL and token, a project whose hook docent registers
// itself, and GitLab-shaped hook deliveries (X-Gitlab-Token, X-Gitlab-Event) steering the job through the real
// gateway, worker and Temporal.

const secretKey = randomBytes(32).toString('base64');

let gitlab: GitLabDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let worker: Started;
let workspaceDir: string;
let operator: string;
let adminKey: string;
let forgeId: string;
let webhookUrl: string;
let jobId: string;
let iid: number;
let docentToken: string;

const call = async (key: string, method: string, p: string, body?: unknown) => {
  const r = await callApi(gw.url, key, method, p, body);
  return { status: r.status, body: (await r.json()) as any };
};
const job = async (id: string) => (await call(adminKey, 'GET', `/v2/agent/site/job/${id}`)).body;
const deliveries = async () => (await call(operator, 'GET', `/v2/admin/orgs/acme/forges/${forgeId}/deliveries`)).body.deliveries as any[];
/** The commits on the merge request's branch that are not on main. */
const commitsOf = async (branch: string) => (await gitlab.git.git('acme', 'site', 'rev-list', `main..refs/heads/${branch}`)).trim().split('\n').filter(Boolean);

beforeAll(async () => {
  gitlab = await startGitLabDouble();
  await gitlab.createProject('acme/site', { 'README.md': '# Site\n' });
  docentToken = gitlab.addUser('docent-bot', { 'acme/site': access.maintainer }).token;
  gitlab.addUser('wanda-writer', { 'acme/site': access.developer });
  gitlab.addUser('rory-reader', { 'acme/site': access.reporter });
  model = await startScriptedModel(writesWhatIsAsked);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-gitlab-ws-'));
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
    DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
    DOCENT_GITHUB_SHARED_ORGS: 'local',
  });
}, 120_000);

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([model?.close(), gitlab?.close()]);
  if (workspaceDir) await rm(workspaceDir, { recursive: true, force: true });
});

it('a gitlab connection is added with its base URL and token, answers its webhook URL and secret, and a project on it gets its hook from docent', async () => {
  const refused = await call(operator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'gitlab', baseUrl: gitlab.url, token: 'glpat-not-a-token' });
  expect(refused).toMatchObject({ status: 400, body: { error: expect.stringContaining('GitLab refused the token (HTTP 401)') } });
  const added = await call(operator, 'POST', '/v2/admin/orgs/acme/forges', { kind: 'gitlab', baseUrl: gitlab.url, token: docentToken });
  expect(added).toMatchObject({
    status: 201,
    body: {
      kind: 'gitlab',
      apiUrl: `${gitlab.url}/api/v4`,
      gitUrl: gitlab.url,
      credential: 'token',
      webhookUrl: expect.stringMatching(/\/forges\/forge_[0-9a-f]+\/webhook$/),
      webhookSecret: expect.any(String),
    },
  });
  expect(JSON.stringify(added.body)).not.toContain(docentToken);
  forgeId = added.body.id;
  webhookUrl = added.body.webhookUrl;

  const project = await call(operator, 'POST', '/v2/admin/projects', { id: 'site', orgId: 'acme', repository: 'acme/site', ref: 'main', domain: 'site.acme.test' });
  expect(project).toMatchObject({ status: 201, body: { forgeId, webhookRegistered: true } });
  expect(gitlab.hooks('acme/site')).toEqual([
    expect.objectContaining({ url: webhookUrl, token: added.body.webhookSecret, note_events: true, merge_requests_events: true, push_events: true, issues_events: true }),
  ]);
  adminKey = (await call(operator, 'POST', '/v2/admin/projects/site/keys', { kind: 'admin' })).body.key;
});

it('the CLI (forge add --kind gitlab --base-url --token-stdin --json) and Connect add the same connection as REST, and refuse a bad token alike', async () => {
  const env = { DOCENT_API_URL: gw.url, DOCENT_OPERATOR_KEY: operator };
  const added = await runDocentIn(['forge', 'add', '--org', 'acme', '--kind', 'gitlab', '--base-url', gitlab.url, '--token-stdin', '--json'], env, `${docentToken}\n`);
  expect(added).toMatchObject({ code: 0, stderr: '' });
  const made = JSON.parse(added.stdout);
  expect(made).toMatchObject({ kind: 'gitlab', orgId: 'acme', apiUrl: `${gitlab.url}/api/v4`, gitUrl: gitlab.url, credential: 'token', webhookSecret: expect.any(String) });
  expect(added.stdout).not.toContain(docentToken);
  const refused = await runDocentIn(['forge', 'add', '--org', 'acme', '--kind', 'gitlab', '--base-url', gitlab.url, '--token-stdin'], env, 'glpat-wrong');
  expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining('GitLab refused the token (HTTP 401)') });

  const admin = createDocentClient({ baseUrl: gw.url, apiKey: operator }).admin;
  const viaConnect = await admin.addForge({ orgId: 'acme', kind: 'gitlab', baseUrl: gitlab.url, token: docentToken });
  expect(viaConnect.forge).toMatchObject({ kind: 'gitlab', apiUrl: `${gitlab.url}/api/v4`, gitUrl: gitlab.url, credential: 'token' });
  for (const id of [made.id, viaConnect.forge!.id]) await admin.removeForge({ orgId: 'acme', forgeId: id });
  expect((await admin.listForges({ orgId: 'acme' })).forges.map((f) => f.id)).toEqual([forgeId]);
});

it('a delivery without the connection secret in X-Gitlab-Token is refused', async () => {
  const res = await fetch(webhookUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': 'guessed', 'x-gitlab-event-uuid': 'b0e5e2a4-0000-4000-8000-000000000001' },
    body: JSON.stringify({ object_kind: 'push', ref: 'refs/heads/main', after: 'a'.repeat(40), project: { path_with_namespace: 'acme/site' } }),
  });
  expect(res.status).toBe(401);
  expect(await res.text()).toContain('X-Gitlab-Token does not match');
});

it('a job opens a merge request on GitLab from its own branch', async () => {
  const created = await call(adminKey, 'POST', '/v2/agent/site/job', { prompt: 'add a contributing guide' });
  expect(created.status).toBe(201);
  jobId = created.body.id;
  const done = await poll(
    'the job',
    () => job(jobId),
    (j) => j.status !== 'active',
    120_000,
  );
  expect(done).toMatchObject({ status: 'completed', forgeId, prLink: expect.stringMatching(new RegExp(`^${gitlab.url}/acme/site/-/merge_requests/\\d+$`)) });
  iid = Number(done.prLink.split('/').pop());
  expect(gitlab.mergeRequests('acme/site')).toHaveLength(1);
  expect(gitlab.mergeRequest('acme/site', iid)).toMatchObject({ state: 'opened', source_branch: done.branch, target_branch: 'main' });
  expect(await commitsOf(done.branch)).toHaveLength(1);
  // The merge request's own "opened" hook asks nothing of docent.
  const opened = await poll(
    'the opened delivery',
    async () => (await deliveries()).find((d) => d.event === 'pull_request'),
    (d) => d !== undefined,
    30_000,
  );
  expect(opened).toMatchObject({ outcome: 'ignored', reason: 'pull request opened, not closed' });
});

it("a reader's @docent mention is ignored with the reason naming their role", async () => {
  await gitlab.as('rory-reader').note('acme/site', iid, '@docent delete everything');
  const record = await poll(
    "the reader's delivery",
    async () => (await deliveries()).find((d) => d.event === 'issue_comment' && d.author === 'rory-reader'),
    (d) => d !== undefined && d.outcome !== 'queued',
    60_000,
  );
  expect(record).toMatchObject({ outcome: 'ignored', reason: expect.stringContaining("the author's role on acme/site is Reporter: only people with Developer, Maintainer or Owner") });
  expect(await commitsOf(gitlab.mergeRequest('acme/site', iid).source_branch)).toHaveLength(1);
});

it("a writer's @docent mention is a follow-up turn: a second commit on the same merge request, 👀 on the note, and docent's answer there", async () => {
  const note = await gitlab.as('wanda-writer').note('acme/site', iid, '@docent please add a code of conduct too');
  const record = await poll(
    "the writer's delivery",
    async () => (await deliveries()).find((d) => d.event === 'issue_comment' && d.author === 'wanda-writer'),
    (d) => d !== undefined && d.outcome !== 'queued',
    60_000,
  );
  expect(record).toMatchObject({ outcome: 'turn_started', jobId });
  const branch = gitlab.mergeRequest('acme/site', iid).source_branch;
  await poll(
    'the second commit',
    () => commitsOf(branch),
    (c) => c.length === 2,
    120_000,
  );
  const done = await poll(
    'turn 2',
    () => job(jobId),
    (j) => j.turn === 2 && j.status !== 'active',
    60_000,
  );
  expect(done).toMatchObject({ status: 'completed', prLink: expect.stringContaining(`/merge_requests/${iid}`) });
  expect(gitlab.mergeRequests('acme/site')).toHaveLength(1);
  expect(note.awards).toEqual([{ name: 'eyes', userId: expect.any(Number) }]);
  const answers = await poll(
    "docent's answer",
    async () => gitlab.mergeRequest('acme/site', iid).notes.filter((n) => n.body.startsWith('Pushed')),
    (ns) => ns.length > 0,
    30_000,
  );
  expect(answers).toHaveLength(1);
});

it('a merged merge request that is no job of docent starts the automation listening for merged pull requests', async () => {
  const automation = await call(adminKey, 'POST', '/v2/agent/site/automations', {
    name: 'changelog on merge',
    trigger: { type: 'merged_pull_request', repo: 'acme/site' },
    instruction: 'update the changelog',
    output: 'pull_request',
  });
  expect(automation.status).toBe(201);
  await gitlab.git.commitFiles('acme', 'site', { 'docs/guide.md': '# Guide\n' }, 'Add a guide', 'feature/guide');
  const writer = gitlab.as('wanda-writer');
  const mr = await writer.openMergeRequest('acme/site', 'feature/guide', 'Add a guide');
  await writer.merge('acme/site', mr.iid);
  const jobs = await poll(
    'the automation job',
    async () => (await call(adminKey, 'GET', '/v2/agent/site/jobs?origin=merged_pull_request')).body.jobs as any[],
    (js) => js.length === 1,
    60_000,
  );
  expect(jobs[0]).toMatchObject({ origin: 'merged_pull_request', automationId: automation.body.id });
});

it("closing the job's merge request on GitLab archives the job", async () => {
  await gitlab.as('wanda-writer').close('acme/site', iid);
  const archived = await poll(
    'the archived job',
    () => job(jobId),
    (j) => j.status === 'archived',
    60_000,
  );
  expect(archived).toMatchObject({ status: 'archived', archivedAt: expect.any(String) });
});

it("an Issue Hook that adds the automation's label starts its job from a Developer, not a Reporter: a merge request that says Fixes #N, 👀 and an answer on the issue", async () => {
  const automation = await call(adminKey, 'POST', '/v2/agent/site/automations', {
    name: 'issues',
    trigger: { type: 'issue', label: 'docent' },
    instruction: 'fix what the issue asks',
    output: 'pull_request',
  });
  expect(automation.status).toBe(201);
  const outsiders = await gitlab.as('rory-reader').openIssue('acme/site', 'Rewrite every page', 'Delete the docs.');
  await gitlab.as('rory-reader').labelIssue('acme/site', outsiders, ['docent']);
  const ignoredRecord = await poll(
    "the reader's label",
    async () => (await deliveries()).find((d) => d.event === 'issues' && d.pullNumber === outsiders),
    (d) => d !== undefined && d.outcome !== 'queued',
    60_000,
  );
  expect(ignoredRecord).toMatchObject({ outcome: 'ignored', reason: expect.stringContaining('rory-reader, who labeled it, has the role Reporter on acme/site') });

  const issue = await gitlab.as('wanda-writer').openIssue('acme/site', 'Typo in the README', 'It says "wrold".');
  // GitLab sends one delivery for all the labels an update adds.
  await gitlab.as('wanda-writer').labelIssue('acme/site', issue, ['bug', 'docent']);
  const record = await poll(
    "the writer's label",
    async () => (await deliveries()).find((d) => d.event === 'issues' && d.pullNumber === issue),
    (d) => d !== undefined && d.outcome !== 'queued',
    60_000,
  );
  expect(record).toMatchObject({ outcome: 'automation_started', jobId: expect.any(String) });
  const done = await poll(
    'the issue job',
    () => job(record.jobId),
    (j) => j.status !== 'active',
    120_000,
  );
  expect(done).toMatchObject({ status: 'completed', origin: 'issue', prLink: expect.stringContaining('/-/merge_requests/') });
  const mr = gitlab.mergeRequest('acme/site', Number(done.prLink.split('/').pop()));
  expect(mr.description).toContain(`Fixes #${issue}`);
  expect(gitlab.issue('acme/site', issue).awards).toEqual([{ name: 'eyes', userId: expect.any(Number) }]);
  const answers = await poll(
    'the answer on the issue',
    async () => gitlab.issue('acme/site', issue).notes.filter((n) => n.body.includes(done.prLink)),
    (ns) => ns.length > 0,
    30_000,
  );
  expect(answers).toHaveLength(1);

  // A Developer's mention on the issue steers its job; the answer goes to the issue, not to a merge request of that number.
  const mergeRequestNotes = gitlab.mergeRequests('acme/site').map((m) => m.notes.length);
  const note = await gitlab.as('wanda-writer').noteOnIssue('acme/site', issue, '@docent also add a changelog');
  await poll(
    'turn 2 of the issue job',
    () => job(record.jobId),
    (j) => j.turn === 2 && j.status !== 'active',
    120_000,
  );
  await poll(
    "the follow-up's answer on the issue",
    async () => gitlab.issue('acme/site', issue).notes.filter((n) => n.body.startsWith('Pushed')),
    (ns) => ns.length === 1,
    30_000,
  );
  expect(note.awards).toEqual([{ name: 'eyes', userId: expect.any(Number) }]);
  expect(gitlab.mergeRequests('acme/site').map((m) => m.notes.length)).toEqual(mergeRequestNotes);
});

it('the token never left GitLab: not in a delivery, a job or the deliveries log', async () => {
  const seen = JSON.stringify([await deliveries(), await job(jobId)]);
  expect(seen).not.toContain(docentToken);
});
