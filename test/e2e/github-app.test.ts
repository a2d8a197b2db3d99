import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/rest';
import { agentJobWorkflowId } from '../../workflows/agent-job-contract';
import { githubDeliveryWorkflowId } from '../../workflows/github-delivery-contract';
import { runDocent } from '../support/cli';
import { startGateway, type RunningGateway } from '../support/gateway';
import { createTestApp, type TestApp } from '../support/github-app-double';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { githubConversation, type GitHubConversation } from '../support/github-double-conversation';
import { deliver, deliverSettled, issueCommentCreated, signedDelivery, type Delivery } from '../support/github-webhooks';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';
import { poll } from '../support/poll';
import { type Started, startWorkerProcess } from '../support/process';
import { appWorkerEnv } from '../support/worker-env';
import { startScriptedModel, type ChatRequest, type ScriptedTurn, type ScriptedModel, modelSettings } from '../support/scripted-model';

/** The file's polls: up to 60 s, as a job's turn may take under the suite's load. */
const waitFor = <T>(what: string, read: () => T | Promise<T>, done: (v: T) => boolean, timeoutMs = 60_000) => poll(what, read, done, timeoutMs);

// docent as a GitHub App, against a GitHub double that takes only the App's JWTs and the installation tokens it
// issued: a real worker process, the gateway taking GitHub's signed webhooks over a socket, real git over HTTP, real
// Temporal and the bubblewrap sandbox for the checks.

const sandboxUid = 61007;
const webhookSecret = 'whsec-app-test-0123456789abcdef';
let app: TestApp;
let git: GitServer;
let github: GitHubDouble;
let conversation: GitHubConversation;
const gatewayLog: string[] = [];
let model: ScriptedModel;
let gw: RunningGateway;
let worker: Started;
let workspaceDir: string;
let secretsDir: string;
let adminKey: string;

const lastUser = (req: ChatRequest) => JSON.stringify(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === 'tool';

/** Each instruction's first word picks its edit; after the tool result, a title and summary. */
const edits: Record<string, Array<{ name: string; args: unknown }>> = {
  'fix-typo': [{ name: 'edit_file', args: { path: 'README.md', old: 'wrold', new: 'world' } }],
  'add-changelog': [{ name: 'write_file', args: { path: 'CHANGELOG.md', content: '# Changes\n' } }],
  'add-notes': [{ name: 'write_file', args: { path: 'NOTES.md', content: 'notes\n' } }],
};
function script(req: ChatRequest): ScriptedTurn {
  // A pull-request comment's instruction starts with the mention.
  const instruction = (/Instruction: ([^"\\]*)/.exec(lastUser(req))?.[1] ?? '').replace(/^@docent /, '');
  const word = instruction.split(' ')[0]!;
  if (afterTool(req) || !edits[word]) return { text: `Do ${word}\n\nDid what was asked: ${word}.` };
  return { toolCalls: edits[word]! };
}

const docent = (env: Record<string, string>, ...args: string[]) => runDocent(args, { DOCENT_MONGO_DB: gw.deps.config.mongo.db, ...env });

/** The settings of an App-mode docent: no personal token anywhere. */
const appEnv = (): Record<string, string> => ({
  DOCENT_GITHUB_SHARED_ORGS: '*',
  DOCENT_GITHUB_API_URL: github.apiUrl,
  DOCENT_GITHUB_GIT_URL: git.url,
  DOCENT_GITHUB_APP_ID: app.id,
  DOCENT_GITHUB_APP_PRIVATE_KEY: app.privateKeyPem,
});

async function runJob(prompt: string): Promise<any> {
  const r = await callApi(gw.url, adminKey, 'POST', '/v2/agent/widgets/job', { prompt });
  expect(r.status).toBe(201);
  return waitForTurn((await r.json()).id, 1);
}

/** The job once turn `turn` has ended. */
async function waitForTurn(id: string, turn: number): Promise<any> {
  const deadline = Date.now() + 100_000;
  for (;;) {
    const job = await (await callApi(gw.url, adminKey, 'GET', `/v2/agent/widgets/job/${id}`)).json();
    if (job.status !== 'active' && job.turn >= turn) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still active: ${JSON.stringify(job)}\n${worker.output.slice(-20).join('\n')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A person's comment on the pull request, stored on the double and delivered to the gateway signed, as GitHub does. */
async function commentAndDeliver(pull: number, body: string, login: string, association: 'MEMBER' | 'CONTRIBUTOR') {
  const comment = conversation.comment({ kind: 'issue', pull, body, login, association });
  const pr = github.pulls.find((p) => p.number === pull)!;
  const delivery = await signedDelivery(webhookSecret, 'issue_comment', issueCommentCreated('acme', 'widgets', pr, comment));
  const log = async () => (await (await callApi(gw.url, adminKey, 'GET', '/v2/agent/widgets/github/deliveries')).json()).deliveries;
  return { comment, delivery, ...(await deliverSettled(gw.url, delivery, log)) };
}

const branchHead = async (branch: string) => (await git.git('acme', 'widgets', 'rev-parse', `refs/heads/${branch}`)).trim();
const passwordOf = (header: string) =>
  Buffer.from(header.replace(/^Basic /, ''), 'base64')
    .toString('utf8')
    .split(':')[1];

beforeAll(async () => {
  app = createTestApp();
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  secretsDir = await mkdtemp(path.join(os.tmpdir(), 'docent-app-key-'));
  git = await startGitServer('ghs_personaltokenthatmustnotwork000');
  conversation = githubConversation(() => github.pulls);
  github = await startGitHubDouble({ app, ...backedBy(git), routes: conversation.routes });
  git.acceptTokens(github.gitAllows);
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n\nHello wrold\n' });
  await git.createRepo('acme', 'gadgets', { 'README.md': '# Gadgets\n' });
  await git.createRepo('acme', 'private-tools', { 'README.md': '# Tools\n' });
  // One installation holds two repositories: a job's token must still reach only its own.
  github.install('acme', 'widgets');
  github.install('acme', 'gadgets');
  // Who may push to the repositories, as GitHub answers it; anyone else has no access.
  conversation.setRole('octo-member', 'write');
  model = await startScriptedModel(script);
  const logs = new PassThrough();
  logs.on('data', (chunk: Buffer) => gatewayLog.push(chunk.toString('utf8')));
  // The gateway answers webhooks with the App too: no personal token anywhere.
  gw = await startGateway(
    {
      ...modelSettings(model),
      ...appEnv(),
      DOCENT_GITHUB_WEBHOOK_SECRET: webhookSecret,
      DOCENT_LOG_LEVEL: 'info',
    },
    { logDestination: logs },
  );
  await gw.deps.tenancy.createOrg('acme');

  const env: Record<string, string> = {
    ...(await appWorkerEnv({ gw, model, github, git, workspaceDir, app, secretsDir })),
    DOCENT_EMBEDDINGS: 'off',
    DOCENT_LOG_LEVEL: 'info',
    DOCENT_AGENT_REPAIR_ROUNDS: '0',
    DOCENT_SANDBOX_USER: `${sandboxUid}:${sandboxUid}`,
    DOCENT_SANDBOX_TIMEOUT_MS: '10000',
  };
  worker = await startWorkerProcess(env);
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  for (const dir of [workspaceDir, secretsDir]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('docent as a GitHub App', () => {
  let firstHead: string;
  let mention: Delivery;

  it('`docent project create` names the install URL for a repository the App is not installed on, and creates one it is', async () => {
    const refused = await docent(appEnv(), 'project', 'create', 'tools', '--org', 'acme', '--repo', 'acme/private-tools', '--ref', 'main', '--domain', 'tools.example.com');
    expect(refused.code).toBe(1);
    expect(github.rejected).toEqual(['404 Not Found']);
    expect(refused.stderr).toContain(`no forge connection of organization acme can read the repository acme/private-tools`);
    expect(refused.stderr).toContain(`install the GitHub App on it at https://github.test/apps/${app.slug}/installations/new`);
    expect(await gw.deps.tenancy.getProject('tools')).toBeNull();

    const created = await docent(appEnv(), 'project', 'create', 'widgets', '--org', 'acme', '--repo', 'acme/widgets', '--ref', 'main', '--domain', 'widgets.example.com');
    expect(created).toMatchObject({ code: 0, stderr: '' });
    // The App found its installation with its JWT, and the private key was never printed.
    expect(github.calls).toContainEqual({ method: 'GET', path: '/repos/acme/widgets/installation', credential: 'jwt' });
    expect(created.stdout + refused.stdout + refused.stderr).not.toContain('PRIVATE KEY');

    await gw.deps.tenancy.updateChecks('widgets', { check: ['grep -q "# Changes" CHANGELOG.md'] });
    adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'widgets' })).key;
  });

  it('a job whose check fails clones, pushes and opens its pull request with a token for its one repository; the check run says failure; a refused draft becomes [checks failing]', async () => {
    github.refuseDrafts();
    const rejectedBefore = github.rejected.length;
    const job = await runJob('fix-typo in the README');
    github.refuseDrafts(false);
    expect(job).toMatchObject({ status: 'completed', checksPassed: false });
    const branch = `docent/${job.id}`;

    // Pull request: drafts are refused (422), so a ready one says its checks fail.
    expect(github.rejected.slice(rejectedBefore)).toEqual([expect.stringMatching(/^422 Validation Failed .*Draft pull requests are not supported/)]);
    expect(github.pulls).toHaveLength(1);
    const pr = github.pulls[0]!;
    expect(job.prLink).toBe(pr.html_url);
    expect(pr).toMatchObject({ head: branch, draft: false, title: '[checks failing] Do fix-typo' });
    expect(pr.body).toContain('1 of 1 failed');

    // Check run on the pushed head: in progress, then failure with the command and the end of its output.
    const head = await branchHead(branch);
    firstHead = head;
    expect(github.checkRuns).toHaveLength(1);
    const run = github.checkRuns[0]!;
    expect(run).toMatchObject({ name: 'docent', headSha: head, status: 'completed', conclusion: 'failure', statusHistory: ['in_progress', 'completed'] });
    expect(run.output?.title).toBe('1 of 1 checks failed');
    expect(run.output?.summary).toContain('`grep -q "# Changes" CHANGELOG.md`');
    expect(run.output?.text).toContain('exit 2');

    // Every token asked for names only this repository and only the four permissions.
    expect(github.tokenRequests.length).toBeGreaterThan(0);
    for (const ask of github.tokenRequests) {
      expect(ask.repositories).toEqual(['widgets']);
      expect(ask.permissions).toEqual({ contents: 'write', pull_requests: 'write', checks: 'write', issues: 'write' });
    }
    const apiCalls = github.calls.filter((c) => c.credential !== 'jwt');
    expect(apiCalls.length).toBeGreaterThan(0);
    for (const c of apiCalls) expect(c).toMatchObject({ credential: 'installation', scope: ['acme/widgets'] });
    // Git cloned and pushed with such a token (the git server accepts nothing else): never the personal one.
    expect(git.pushes.get('/acme/widgets.git')).toBeGreaterThan(0);
    const passwords = new Set(git.authHeaders.map(passwordOf));
    expect(passwords.has(git.token)).toBe(false);
    for (const p of passwords) expect(github.gitAllows(p!, 'acme', 'widgets', true)).toBe(true);
    for (const p of passwords) expect(github.gitAllows(p!, 'acme', 'gadgets', false)).toBe(false);

    // No token in the worker's logs, the job's Temporal history or the job record.
    const history = JSON.stringify(await gw.deps.temporal.workflow.getHandle(agentJobWorkflowId(job.id)).fetchHistory());
    for (const p of passwords) {
      expect(worker.output.join('\n')).not.toContain(p);
      expect(history).not.toContain(p);
      expect(JSON.stringify(job)).not.toContain(p);
    }
    // The clone goes once the turn has ended, a step after the job's status says so.
    await waitFor(
      'the workspace removed',
      () => readdir(workspaceDir),
      (names) => names.length === 0,
    );
  });

  it("a member's @docent mention on the pull request pushes a second commit whose check run succeeds, and is answered; every call for it used a token for the one repository", async () => {
    const pr = github.pulls[0]!;
    const jobId = pr.head.replace('docent/', '');
    const callsBefore = github.calls.length;
    const rejectedBefore = github.rejected.length;
    const pushesBefore = git.pushes.get('/acme/widgets.git')!;
    const gitAuthBefore = git.authHeaders.length;
    const sent = await commentAndDeliver(pr.number, '@docent add-changelog for the check', 'octo-member', 'MEMBER');
    mention = sent.delivery;
    expect(sent).toMatchObject({ status: 202, answer: { outcome: 'queued' }, body: { outcome: 'turn_started' } });
    expect(conversation.reactions).toEqual([{ kind: 'issue', commentId: sent.comment.id, content: 'eyes' }]);

    const job = await waitForTurn(jobId, 2);
    expect(job).toMatchObject({ status: 'completed', turn: 2, checksPassed: true });
    const commits = (await git.git('acme', 'widgets', 'rev-list', `main..docent/${jobId}`)).trim().split('\n');
    expect(commits).toEqual([await branchHead(`docent/${jobId}`), firstHead]);
    // The second push, with an installation token that reaches acme/widgets and not the installation's other repository.
    expect(git.pushes.get('/acme/widgets.git')).toBeGreaterThan(pushesBefore);
    const passwords = new Set(git.authHeaders.slice(gitAuthBefore).map(passwordOf));
    expect(passwords.size).toBeGreaterThan(0);
    for (const p of passwords) expect([github.gitAllows(p!, 'acme', 'widgets', true), github.gitAllows(p!, 'acme', 'gadgets', false)]).toEqual([true, false]);
    expect(github.pulls).toHaveLength(1);

    // The check run of the new head succeeds.
    const run = github.checkRuns.find((x) => x.headSha === commits[0])!;
    expect(run).toMatchObject({ name: 'docent', status: 'completed', conclusion: 'success', statusHistory: ['in_progress', 'completed'] });
    expect(run.output?.title).toBe('all 1 checks passed');
    expect(github.checkRuns.map((x) => x.conclusion)).toEqual(['failure', 'success']);

    const [answer] = await waitFor(
      'the answer',
      () => github.comments.filter((c) => c.issue === pr.number),
      (a) => a.length === 1,
    );
    expect(answer!.body).toContain(`[\`${commits[0]!.slice(0, 7)}\`](${pr.html_url}/commits/${commits[0]}): Do add-changelog`);

    // The gateway's reaction and pull-request lookup, and the worker's answer, with installation tokens for acme/widgets alone.
    const since = github.calls.slice(callsBefore);
    const repo = '/repos/acme/widgets';
    for (const [method, p] of [
      ['GET', `${repo}/pulls/${pr.number}`],
      ['POST', `${repo}/issues/comments/${sent.comment.id}/reactions`],
      ['POST', `${repo}/issues/${pr.number}/comments`],
    ]) {
      expect(since).toContainEqual({ method, path: p, credential: 'installation', scope: ['acme/widgets'] });
    }
    for (const c of since.filter((x) => x.credential !== 'jwt')) expect(c).toMatchObject({ credential: 'installation', scope: ['acme/widgets'] });
    for (const ask of github.tokenRequests) {
      expect(ask.repositories).toEqual(['widgets']);
      expect(ask.permissions).toEqual({ contents: 'write', pull_requests: 'write', checks: 'write', issues: 'write' });
    }
    expect(github.rejected.slice(rejectedBefore)).toEqual([]);

    // No installation token in either process's logs, the Temporal histories of the job and of the delivery's work, or any document of the database.
    const histories = [agentJobWorkflowId(jobId), githubDeliveryWorkflowId(gw.deps.config.temporal.taskQueuePrefix, mention.id)].map((id) => gw.deps.temporal.workflow.getHandle(id).fetchHistory());
    const history = JSON.stringify(await Promise.all(histories));
    const db = gw.deps.mongo.db;
    const stored = await Promise.all((await db.listCollections().toArray()).map(async (c) => JSON.stringify(await db.collection(c.name).find().toArray())));
    expect(stored.join('')).toContain(mention.id);
    expect(github.issuedTokens().length).toBeGreaterThan(0);
    for (const t of github.issuedTokens()) {
      for (const text of [worker.output.join('\n'), gatewayLog.join(''), history, ...stored]) expect(text).not.toContain(t);
    }
  });

  it('the same delivery sent again does nothing, a bad signature gets 401, and a mention by someone who cannot push starts nothing', async () => {
    const pr = github.pulls[0]!;
    const jobId = pr.head.replace('docent/', '');
    const callsBefore = github.calls.length;

    const again = await deliver(gw.url, mention);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id: mention.id, outcome: 'duplicate' });

    const forged = await signedDelivery('not-the-secret-0123456789', 'issue_comment', JSON.parse(mention.body));
    const refused = await deliver(gw.url, forged);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: 'X-Hub-Signature-256 does not match the body', code: 'unauthenticated' });

    const outsider = await commentAndDeliver(pr.number, '@docent add-notes everywhere', 'drive-by', 'CONTRIBUTOR');
    expect(outsider).toMatchObject({ status: 202, body: { outcome: 'ignored', reason: "the author's role on acme/widgets is none: only people with write, maintain or admin may steer a job" } });

    // No turn, no reaction, no answer; GitHub was asked only the author's permission, with the repository's own installation token.
    expect(await waitForTurn(jobId, 2)).toMatchObject({ turn: 2, status: 'completed' });
    expect(conversation.reactions).toHaveLength(1);
    expect(github.comments.filter((c) => c.issue === pr.number)).toHaveLength(1);
    expect(github.calls.slice(callsBefore)).toEqual([{ method: 'GET', path: '/repos/acme/widgets/collaborators/drive-by/permission', credential: 'installation', scope: ['acme/widgets'] }]);
    const listed = (await (await callApi(gw.url, adminKey, 'GET', '/v2/agent/widgets/github/deliveries')).json()).deliveries.map((d: { id: string }) => d.id);
    expect(listed).toContain(outsider.delivery.id);
    expect(listed).not.toContain(forged.id);
  });

  it('GitHub rate limits (a secondary limit with retry-after, a primary one with x-ratelimit-reset) are waited out and the calls succeed', async () => {
    github.rateLimitNext('POST', /^\/repos\/acme\/widgets\/pulls$/, { status: 403, retryAfterSeconds: 1 });
    github.rateLimitNext('POST', /^\/repos\/acme\/widgets\/check-runs$/, { status: 429, resetInSeconds: 1 });
    const rejectedBefore = github.rejected.length;
    const job = await runJob('add-notes for the record');
    expect(job).toMatchObject({ status: 'completed', prLink: expect.stringContaining('/pull/') });
    expect(github.rateLimits).toHaveLength(2);
    for (const limit of github.rateLimits) {
      expect(limit.retriedAt).toBeDefined();
      expect(limit.retriedAt!).toBeGreaterThanOrEqual(limit.retryAt);
    }
    // No call came back before its time (the double would have refused it).
    expect(github.rejected.slice(rejectedBefore)).toEqual([]);
    expect(github.pulls.at(-1)).toMatchObject({ head: `docent/${job.id}`, draft: true });
    // One token per process and repository: the worker's served every step of the three turns and the delivery's work;
    // the gateway, which only verifies and records deliveries, asked for none.
    expect(github.tokenRequests).toHaveLength(1);
  });

  it("GitHub would refuse the conversation's calls with a token for another repository (404) or without issues write (403)", async () => {
    const pr = github.pulls[0]!;
    const comment = conversation.comment({ kind: 'issue', pull: pr.number, body: 'a person writes', login: 'octo-member', association: 'MEMBER' });
    // The refusals are expected: no request log.
    const quiet = { baseUrl: github.apiUrl, log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} } };
    const appAuth = createAppAuth({ appId: app.id, privateKey: app.privateKeyPem, request: new Octokit(quiet).request });
    const asApp = new Octokit({ ...quiet, authStrategy: createAppAuth, auth: { appId: app.id, privateKey: app.privateKeyPem } });
    const { data: installation } = await asApp.rest.apps.getRepoInstallation({ owner: 'acme', repo: 'gadgets' });
    const withToken = async (repositoryNames: string[], permissions: Record<string, string>) =>
      new Octokit({ ...quiet, auth: (await appAuth({ type: 'installation', installationId: installation.id, repositoryNames, permissions, refresh: true })).token });
    const statusOf = (call: Promise<unknown>) =>
      call.then(
        () => 200,
        (err: { status: number }) => err.status,
      );

    const otherRepo = await withToken(['gadgets'], { issues: 'write', pull_requests: 'write' });
    const readOnly = await withToken(['widgets'], { contents: 'write', pull_requests: 'read' });
    const target = { owner: 'acme', repo: 'widgets' };
    expect(await statusOf(otherRepo.rest.reactions.createForIssueComment({ ...target, comment_id: comment.id, content: 'eyes' }))).toBe(404);
    expect(await statusOf(otherRepo.rest.issues.createComment({ ...target, issue_number: pr.number, body: 'hello' }))).toBe(404);
    expect(await statusOf(otherRepo.rest.pulls.get({ ...target, pull_number: pr.number }))).toBe(404);
    expect(await statusOf(readOnly.rest.reactions.createForIssueComment({ ...target, comment_id: comment.id, content: 'eyes' }))).toBe(403);
    expect(await statusOf(readOnly.rest.issues.createComment({ ...target, issue_number: pr.number, body: 'hello' }))).toBe(403);
    expect(await statusOf(readOnly.rest.pulls.get({ ...target, pull_number: pr.number }))).toBe(200);
    expect(conversation.reactions.filter((r) => r.commentId === comment.id)).toEqual([]);
  });
});
