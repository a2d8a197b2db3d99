import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { Octokit } from '@octokit/rest';
import path from 'node:path';
import { runDocent } from '../support/cli';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { githubConversation, type GitHubConversation } from '../support/github-double-conversation';
import { deliver, deliverSettled, issueCommentCreated, issueLabeled, pullRequestClosed, reviewCommentCreated, signedDelivery } from '../support/github-webhooks';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi, type JsonResponse } from '../support/http';
import { poll } from '../support/poll';
import { type Started, startWorkerProcess } from '../support/process';
import { readEventStream } from '../support/sse';
import { agentWorkerEnv } from '../support/worker-env';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings } from '../support/scripted-model';
import { createWidgetsProject } from '../support/projects';
import { followDocs, unfollowDocs } from '../../src/docs/sync-schedule';

/** The file's polls: up to 90 s, as a job's turn may take under the suite's load. */
const waitFor = <T>(what: string, read: () => T | Promise<T>, done: (v: T) => boolean, timeoutMs = 90_000) => poll(what, read, done, timeoutMs);

// Pull-request comments steer a job: GitHub's signed webhooks into the gateway over a socket, a worker process, real
// Temporal, MongoDB and git over HTTP; only the model provider and the GitHub API are doubles. Token mode: each project
// has its own webhook secret, made by the compiled `docent project webhook-secret` as an operator runs it.

const token = 'ghs_docentmentionstoken0123456789';
const globalSecret = 'whsec-mentions-test-0123456789abcdef';
const secretKey = randomBytes(32).toString('base64');
/** widgets' own webhook secret (the one GitHub signs acme/widgets' deliveries with), and other projects'. */
let secret: string;
let otherSecret: string;
let gadgetsSecret: string;
let git: GitServer;
let github: GitHubDouble;
let conversation: GitHubConversation;
let model: ScriptedModel;
let gw: RunningGateway;
let workspaceDir: string;
let worker: Started;
let adminKey: string;
let otherKey: string;

/** The compiled `docent` command against the gateway's database, as cli.test.ts runs it. */
const docent = (...args: string[]) => runDocent(args, { DOCENT_MONGO_DB: gw.deps.config.mongo.db, DOCENT_SECRET_KEY: secretKey, DOCENT_GITHUB_GIT_URL: git.url, DOCENT_GITHUB_TOKEN: token });

async function webhookSecretOf(projectId: string): Promise<string> {
  const r = await docent('project', 'webhook-secret', projectId);
  if (r.code !== 0) throw new Error(`docent project webhook-secret ${projectId}: ${r.stderr}`);
  return r.stdout.trim();
}

/** The instruction of the model call: what follows the last "Instruction: " of its opening message. */
const instructionOf = (req: ChatRequest) => {
  const opening = JSON.stringify(req.messages.find((m) => m.role === 'user')?.content ?? '');
  return opening.slice(opening.lastIndexOf('Instruction: '));
};
const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === 'tool';

const slowOnce = new Set<string>();

function script(req: ChatRequest): ScriptedTurn {
  const instruction = instructionOf(req);
  if (instruction.includes('think it over')) {
    // The first attempt stalls until the test stops it; the retry answers at once.
    const first = !slowOnce.has('think');
    slowOnce.add('think');
    return { text: 'Thought it over\n\nThe README needs nothing more.', firstChunkDelayMs: first ? 60_000 : 0 };
  }
  if (instruction.includes('Review comment on')) return { text: 'Nothing to change\n\nThe greeting on that line is already right.' };
  if (instruction.includes('fix the typo')) {
    return afterTool(req) ? { text: 'Fix typo in README\n\nCorrected "wrold" to "world".' } : { toolCalls: [{ name: 'edit_file', args: { path: 'README.md', old: 'wrold', new: 'world' } }] };
  }
  if (instruction.includes('add a contributing guide')) {
    return afterTool(req)
      ? { text: 'Add CONTRIBUTING.md\n\nExplains how to send changes.' }
      : { toolCalls: [{ name: 'write_file', args: { path: 'CONTRIBUTING.md', content: '# Contributing\n\nOpen a pull request.\n' } }] };
  }
  return { text: 'No change needed\n\nNothing was asked.' };
}

beforeAll(async () => {
  git = await startGitServer(token);
  conversation = githubConversation(() => github.pulls);
  github = await startGitHubDouble({ token, ...backedBy(git), routes: conversation.routes });
  model = await startScriptedModel(script);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n\nHello wrold\n' });
  gw = await startGateway({
    ...modelSettings(model),
    DOCENT_GITHUB_GIT_URL: git.url,
    DOCENT_GITHUB_API_URL: github.apiUrl,
    DOCENT_GITHUB_TOKEN: token,
    // Token mode: verifies only push and ping; comments and pull requests need the project's own secret.
    DOCENT_GITHUB_WEBHOOK_SECRET: globalSecret,
    DOCENT_SECRET_KEY: secretKey,
    // A stop reaches the working agent at its next heartbeat.
    DOCENT_AGENT_HEARTBEAT_TIMEOUT_MS: '3000',
  });
  adminKey = await createWidgetsProject(gw);
  // Another project on the same repository: it sees the repository's deliveries, never those about widgets' jobs.
  await gw.deps.tenancy.createProject({ _id: 'other', orgId: 'acme', repository: 'acme/widgets', ref: 'main', domain: 'other.widgets.test' });
  otherKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'other' })).key;
  // Another tenant's project on another repository, with its own webhook.
  await gw.deps.tenancy.createProject({ _id: 'gadgets', orgId: 'acme', repository: 'acme/gadgets', ref: 'main' });
  [secret, otherSecret, gadgetsSecret] = [await webhookSecretOf('widgets'), await webhookSecretOf('other'), await webhookSecretOf('gadgets')];
  // Who may push, as GitHub would answer: everyone else has no access to the private repository.
  conversation.setRole('octo-member', 'write');
  conversation.setRole('octo-owner', 'admin');
  conversation.setRole('octo-reader', 'read');
  conversation.setRole('octo-triager', 'triage');
  worker = await startWorkerProcess(agentWorkerEnv({ gw, model, github, git, token, workspaceDir }));
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  await rm(workspaceDir, { recursive: true, force: true });
});

const api = (method: string, p: string, body?: unknown): Promise<JsonResponse> => callApi(gw.url, adminKey, method, p, body);

const readJob = async (jobId: string) => (await api('GET', `/v2/agent/widgets/job/${jobId}`)).json();
const deliveries = async () => (await (await api('GET', '/v2/agent/widgets/github/deliveries')).json()).deliveries as any[];
const otherDeliveries = async () => (await (await callApi(gw.url, otherKey, 'GET', '/v2/agent/other/github/deliveries')).json()).deliveries as any[];
const answersOn = (pull: number) => github.comments.filter((c) => c.issue === pull);

/** A person's comment, stored on the double and delivered to the gateway as GitHub would. */
async function commentAndDeliver(c: Parameters<GitHubConversation['comment']>[0]) {
  const comment = conversation.comment(c);
  const pr = github.pulls.find((p) => p.number === c.pull)!;
  const payload = c.kind === 'review' ? reviewCommentCreated('acme', 'widgets', pr, comment) : issueCommentCreated('acme', 'widgets', pr, comment);
  const delivery = await signedDelivery(secret, c.kind === 'review' ? 'pull_request_review_comment' : 'issue_comment', payload);
  return { comment, delivery, ...(await deliverSettled(gw.url, delivery, deliveries)) };
}

describe('pull-request comments steer the agent', () => {
  let jobId: string;
  let pull: number;
  let firstHead: string;
  let mentionDelivery: Awaited<ReturnType<typeof signedDelivery>>;

  it('a job opens its pull request', async () => {
    const created = await (await api('POST', '/v2/agent/widgets/job', { prompt: 'add a contributing guide' })).json();
    jobId = created.id;
    const job = await waitFor(
      'the job',
      () => readJob(jobId),
      (j) => j.status !== 'active',
    );
    expect(job.status).toBe('completed');
    pull = github.pulls.find((p) => p.head === `docent/${jobId}`)!.number;
    firstHead = (await git.git('acme', 'widgets', 'rev-parse', `docent/${jobId}`)).trim();
  });

  it('a mention by a member starts a turn, is acknowledged with eyes, pushes a second commit and is answered with its link', async () => {
    const sent = await commentAndDeliver({ kind: 'issue', pull, body: '@docent please fix the typo in the README', login: 'octo-member', association: 'MEMBER' });
    mentionDelivery = sent.delivery;
    // GitHub's answer comes first; the log then shows what docent did.
    expect(sent).toMatchObject({ status: 202, answer: { id: sent.delivery.id, outcome: 'queued' } });
    expect(sent.body).toMatchObject({ id: sent.delivery.id, outcome: 'turn_started', turn: 2 });
    // The acknowledgement comes with the turn's start, before its work.
    expect(conversation.reactions).toEqual([{ kind: 'issue', commentId: sent.comment.id, content: 'eyes' }]);

    const job = await waitFor(
      'turn 2',
      () => readJob(jobId),
      (j) => j.turn === 2 && j.status !== 'active',
    );
    expect(job.status).toBe('completed');
    expect(job.turns.map((t: { prompt: string }) => t.prompt)).toEqual(['add a contributing guide', '@docent please fix the typo in the README']);
    const commits = (await git.git('acme', 'widgets', 'rev-list', `main..docent/${jobId}`)).trim().split('\n');
    expect(commits).toHaveLength(2);
    expect(commits[1]).toBe(firstHead);
    expect(await git.git('acme', 'widgets', 'show', `docent/${jobId}:README.md`)).toBe('# Widgets\n\nHello world\n');
    expect(github.pulls.filter((p) => p.head === `docent/${jobId}`)).toHaveLength(1);

    const [answer] = await waitFor(
      'the answer',
      () => answersOn(pull),
      (a) => a.length === 1,
    );
    expect(answer!.body).toContain(`[\`${commits[0]!.slice(0, 7)}\`](${github.pulls.find((p) => p.number === pull)!.html_url}/commits/${commits[0]})`);
    expect(answer!.body).toContain('Fix typo in README');
    expect(github.rejected).toEqual([]);
  });

  it('the same delivery sent again does nothing', async () => {
    const r = await deliver(gw.url, mentionDelivery);
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ id: mentionDelivery.id, outcome: 'duplicate' });
    const job = await readJob(jobId);
    expect(job.turn).toBe(2);
    expect(conversation.reactions).toHaveLength(1);
    expect(answersOn(pull)).toHaveLength(1);
  });

  it('the same body replayed under a new delivery id is not acted on again', async () => {
    // X-GitHub-Delivery is not signed: whoever captured the body and its signature can send it under any id.
    const id = randomUUID();
    const r = await deliver(gw.url, { ...mentionDelivery, id, headers: { ...mentionDelivery.headers, 'x-github-delivery': id } });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ id, outcome: 'duplicate' });
    const job = await readJob(jobId);
    expect(job).toMatchObject({ turn: 2, status: 'completed' });
    expect(conversation.reactions).toHaveLength(1);
    expect(answersOn(pull)).toHaveLength(1);
    expect((await deliveries()).find((d) => d.id === id)).toMatchObject({ outcome: 'ignored', reason: expect.stringContaining('received before under another delivery id') });
  });

  it('a member who can only read and a collaborator who can only triage mention @docent: ignored with the reason, nothing steered', async () => {
    const reader = await commentAndDeliver({ kind: 'issue', pull, body: '@docent fix the typo in the README', login: 'octo-reader', association: 'MEMBER' });
    const triager = await commentAndDeliver({ kind: 'issue', pull, body: '@docent add a contributing guide', login: 'octo-triager', association: 'COLLABORATOR' });
    expect(reader).toMatchObject({ status: 202, body: { outcome: 'ignored' } });
    expect(triager).toMatchObject({ status: 202, body: { outcome: 'ignored' } });
    // GitHub was asked, not the comment's author_association.
    expect(conversation.permissionQueries).toEqual(expect.arrayContaining(['octo-reader', 'octo-triager']));
    expect(await readJob(jobId)).toMatchObject({ turn: 2, status: 'completed' });
    expect(conversation.reactions).toHaveLength(1);
    expect(answersOn(pull)).toHaveLength(1);
    const listed = await deliveries();
    expect(listed.find((d) => d.id === reader.delivery.id)).toMatchObject({
      author: 'octo-reader',
      outcome: 'ignored',
      reason: "the author's role on acme/widgets is read: only people with write, maintain or admin may steer a job",
    });
    expect(listed.find((d) => d.id === triager.delivery.id)).toMatchObject({ author: 'octo-triager', outcome: 'ignored', reason: expect.stringContaining('role on acme/widgets is triage') });
  });

  it("a delivery about acme/widgets signed with another repository's project secret, or a comment signed with the global secret, is refused 401 and not recorded", async () => {
    const pr = github.pulls.find((p) => p.number === pull)!;
    const comment = conversation.comment({ kind: 'issue', pull, body: '@docent fix the typo in the README', login: 'octo-member', association: 'MEMBER' });
    const payload = issueCommentCreated('acme', 'widgets', pr, comment);
    const forged = [
      await signedDelivery(gadgetsSecret, 'issue_comment', payload),
      // Archiving another tenant's job by its branch name.
      await signedDelivery(gadgetsSecret, 'pull_request', pullRequestClosed('acme', 'widgets', pr, false)),
      await signedDelivery(globalSecret, 'issue_comment', payload),
    ];
    for (const d of forged) {
      const r = await deliver(gw.url, d);
      expect(r.status).toBe(401);
      expect(await r.json()).toEqual({ error: expect.stringContaining('X-Hub-Signature-256'), code: 'unauthenticated' });
    }
    expect(await readJob(jobId)).toMatchObject({ turn: 2, status: 'completed' });
    expect(conversation.reactions).toHaveLength(1);
    const ids = (await deliveries()).map((d) => d.id);
    for (const d of forged) expect(ids).not.toContain(d.id);
    // gadgets' secret still signs what is about its own repository.
    const own = await deliver(gw.url, await signedDelivery(gadgetsSecret, 'ping', { zen: 'Speak like a human.', hook_id: 9, repository: { full_name: 'acme/gadgets' } }));
    expect(await own.json()).toMatchObject({ outcome: 'ignored', reason: 'ping: the webhook is set up' });
  });

  it("another project's own secret on the same repository neither archives nor steers this project's job: ignored, and listed in that project's log", async () => {
    const pr = github.pulls.find((p) => p.number === pull)!;
    const comment = conversation.comment({ kind: 'issue', pull, body: '@docent delete the README', login: 'octo-owner', association: 'OWNER' });
    const review = conversation.comment({ kind: 'review', pull, body: '@docent delete this line', login: 'octo-owner', association: 'OWNER', path: 'README.md', line: 3, diffHunk: '@@ -1 +1 @@' });
    const sent = [
      await signedDelivery(otherSecret, 'pull_request', pullRequestClosed('acme', 'widgets', pr, false)),
      await signedDelivery(otherSecret, 'issue_comment', issueCommentCreated('acme', 'widgets', pr, comment)),
      await signedDelivery(otherSecret, 'pull_request_review_comment', reviewCommentCreated('acme', 'widgets', pr, review)),
    ];
    for (const d of sent) {
      const r = await deliverSettled(gw.url, d, otherDeliveries);
      expect(r.body).toMatchObject({ outcome: 'ignored', reason: "not the pull request of a docent job of this connection's organization" });
    }
    expect(await readJob(jobId)).toMatchObject({ turn: 2, status: 'completed', archivedAt: null });
    expect(conversation.reactions).toHaveLength(1);
    const otherLog = await otherDeliveries();
    for (const d of sent) expect(otherLog.find((x) => x.id === d.id)).toMatchObject({ outcome: 'ignored' });
    const ids = (await deliveries()).map((d) => d.id);
    for (const d of sent) expect(ids).not.toContain(d.id);
  });

  it('docent project webhook-secret prints a new secret once, stores no copy of it, and the previous one stops verifying', async () => {
    const r = await docent('project', 'webhook-secret', 'other', '--json');
    expect(r.code).toBe(0);
    const made = JSON.parse(r.stdout);
    expect(made).toEqual({ projectId: 'other', repository: 'acme/widgets', secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(made.secret).not.toBe(otherSecret);
    const ping = { zen: 'Design for failure.', hook_id: 10, repository: { full_name: 'acme/widgets' } };
    expect((await deliver(gw.url, await signedDelivery(otherSecret, 'ping', ping))).status).toBe(401);
    expect((await deliver(gw.url, await signedDelivery(made.secret, 'ping', ping))).status).toBe(200);
    otherSecret = made.secret;
    const stored = JSON.stringify(await gw.deps.mongo.db.collection('github_webhook_secrets').find().toArray());
    for (const s of [secret, otherSecret, gadgetsSecret]) expect(stored).not.toContain(s);
    expect(await docent('project', 'webhook-secret', 'nope')).toMatchObject({ code: 1, stderr: expect.stringContaining('project nope not found') });
  });

  it('a delivery with a bad signature is refused 401 and not recorded', async () => {
    const forged = await signedDelivery('not-the-secret-0123456789', 'issue_comment', JSON.parse(mentionDelivery.body));
    const r = await deliver(gw.url, forged);
    expect(r.status).toBe(401);
    expect(await r.json()).toEqual({ error: expect.stringContaining('X-Hub-Signature-256'), code: 'unauthenticated' });
    const unsigned = await deliver(gw.url, { ...forged, headers: { ...forged.headers, 'x-hub-signature-256': '' } });
    expect(unsigned.status).toBe(401);
    expect((await deliveries()).map((d) => d.id)).not.toContain(forged.id);
  });

  it('a mention by a non-collaborator, a comment without a mention, or a mention on a pull request of no job starts nothing and is listed as ignored with the reason', async () => {
    const outsider = await commentAndDeliver({ kind: 'issue', pull, body: '@docent delete everything', login: 'drive-by', association: 'CONTRIBUTOR' });
    const chatter = await commentAndDeliver({ kind: 'issue', pull, body: 'looks good to me', login: 'octo-member', association: 'MEMBER' });
    // A pull request a person opened from their own branch is no job's.
    await git.git('acme', 'widgets', 'branch', 'feature/people', 'main');
    const octokit = new Octokit({ auth: token, baseUrl: github.apiUrl });
    const { data: theirs } = await octokit.rest.pulls.create({ owner: 'acme', repo: 'widgets', head: 'feature/people', base: 'main', title: 'A human change' });
    const elsewhere = await commentAndDeliver({ kind: 'issue', pull: theirs.number, body: '@docent fix the typo in the README', login: 'octo-member', association: 'MEMBER' });
    // An event docent has no handler for (and one named like an object's own property).
    const starred = await signedDelivery(secret, 'star', { action: 'created', starred_at: new Date().toISOString(), repository: { full_name: 'acme/widgets' }, sender: { login: 'fan' } });
    const odd = await signedDelivery(secret, 'constructor', { repository: { full_name: 'acme/widgets' } });
    const unhandled = [await deliver(gw.url, starred), await deliver(gw.url, odd)];
    // What needs nothing of docent is settled in the answer (200); what needs GitHub asked is queued (202).
    expect([outsider.status, chatter.status, elsewhere.status, ...unhandled.map((r) => r.status)]).toEqual([202, 200, 202, 200, 200]);
    expect(chatter.answer).toEqual({ id: chatter.delivery.id, outcome: 'ignored', reason: 'no mention of @docent' });
    expect(outsider.body.outcome).toBe('ignored');
    expect((await readJob(jobId)).turn).toBe(2);
    expect(conversation.reactions).toHaveLength(1);

    const listed = await deliveries();
    expect(listed.find((d) => d.id === outsider.delivery.id)).toMatchObject({
      event: 'issue_comment',
      action: 'created',
      repository: 'acme/widgets',
      pullNumber: pull,
      author: 'drive-by',
      outcome: 'ignored',
      reason: "the author's role on acme/widgets is none: only people with write, maintain or admin may steer a job",
    });
    expect(listed.find((d) => d.id === chatter.delivery.id)).toMatchObject({ outcome: 'ignored', reason: 'no mention of @docent' });
    expect(listed.find((d) => d.id === elsewhere.delivery.id)).toMatchObject({
      outcome: 'ignored',
      reason: "not the pull request of a docent job of this connection's organization",
      pullNumber: theirs.number,
    });
    expect(listed.find((d) => d.id === starred.id)).toMatchObject({ event: 'star', outcome: 'ignored', reason: 'event star is not handled' });
    expect(listed.find((d) => d.id === odd.id)).toMatchObject({ event: 'constructor', outcome: 'ignored', reason: 'event constructor is not handled' });
    const otherSees = (await (await callApi(gw.url, otherKey, 'GET', '/v2/agent/other/github/deliveries')).json()).deliveries.map((d: { id: string }) => d.id);
    // Deliveries to widgets' webhook are widgets' alone.
    expect(otherSees).not.toContain(starred.id);
    expect(otherSees).not.toContain(mentionDelivery.id);
    expect(listed.find((d) => d.id === mentionDelivery.id)).toMatchObject({ outcome: 'turn_started', jobId, turn: 2 });
  });

  it('a review comment carries its file, line and diff hunk into the prompt', async () => {
    const diffHunk = '@@ -1,3 +1,3 @@\n # Widgets\n \n-Hello wrold\n+Hello world';
    const sent = await commentAndDeliver({ kind: 'review', pull, body: '@docent is this greeting right?', login: 'octo-owner', association: 'OWNER', path: 'README.md', line: 3, diffHunk });
    expect(sent.body.outcome).toBe('turn_started');
    expect(conversation.reactions.at(-1)).toEqual({ kind: 'review', commentId: sent.comment.id, content: 'eyes' });
    await waitFor(
      'turn 3',
      () => readJob(jobId),
      (j) => j.turn === 3 && j.status !== 'active',
    );
    const request = model.requests.find((q) => instructionOf(q).includes('Review comment on'))!;
    const instruction = instructionOf(request);
    expect(instruction).toContain('Review comment on README.md line 3');
    expect(instruction).toContain('is this greeting right?');
    expect(instruction).toContain(JSON.stringify(diffHunk).slice(1, -1));
    const answers = await waitFor(
      'the second answer',
      () => answersOn(pull),
      (a) => a.length === 2,
    );
    expect(answers[1]!.body).toContain('I changed nothing.');
    expect(answers[1]!.body).toContain('The greeting on that line is already right.');
  });

  it('a stopped turn is answered that it stopped, and its retry through the API is answered on the pull request too', async () => {
    const sent = await commentAndDeliver({ kind: 'issue', pull, body: '@docent think it over once more', login: 'octo-member', association: 'MEMBER' });
    expect(sent.body).toMatchObject({ outcome: 'turn_started' });
    await waitFor('the slow model call', () => model.requests.some((q) => instructionOf(q).includes('think it over')), Boolean);
    expect((await api('POST', `/v2/agent/widgets/job/${jobId}/stop`)).status).toBe(202);
    await waitFor(
      'the stopped turn',
      () => readJob(jobId),
      (j) => j.turn === 4 && j.status === 'failed',
    );
    const stopped = await waitFor(
      'the answer to the stop',
      () => answersOn(pull),
      (a) => a.length === 3,
    );
    expect(stopped[2]!.body).toContain('This instruction failed (`stopped`)');

    expect((await api('POST', `/v2/agent/widgets/job/${jobId}/retry`)).status).toBe(200);
    await waitFor(
      'the retried turn',
      () => readJob(jobId),
      (j) => j.turn === 4 && j.status === 'completed',
    );
    const retried = await waitFor(
      'the answer to the retry',
      () => answersOn(pull),
      (a) => a.length === 4,
    );
    expect(retried[3]!.body).toContain('The README needs nothing more.');
  });

  it('a slow GitHub holds nothing: the delivery is answered at once, and its turn starts after the slow call, once', async () => {
    const before = await readJob(jobId);
    const reactionsBefore = conversation.reactions.length;
    // The pull request's state, which docent reads before it steers the job, takes GitHub 10 s to answer.
    const held = github.holdNext('GET', new RegExp(`^/repos/acme/widgets/pulls/${pull}$`), 10_000);
    const comment = conversation.comment({ kind: 'issue', pull, body: '@docent check the README once more', login: 'octo-member', association: 'MEMBER' });
    const delivery = await signedDelivery(secret, 'issue_comment', issueCommentCreated('acme', 'widgets', github.pulls.find((p) => p.number === pull)!, comment));
    const r = await deliver(gw.url, delivery);
    // Answered while the call it causes is still unanswered: recorded, queued, nothing done yet.
    expect(held.answeredAt).toBeUndefined();
    expect(r.status).toBe(202);
    expect(await r.json()).toEqual({ id: delivery.id, outcome: 'queued', reason: expect.stringContaining('the deliveries log says what it did') });
    expect((await deliveries()).find((d) => d.id === delivery.id)).toMatchObject({ event: 'issue_comment', outcome: 'queued' });
    expect(conversation.reactions).toHaveLength(reactionsBefore);

    const settled = await waitFor(
      'the queued delivery settled',
      async () => (await deliveries()).find((d) => d.id === delivery.id),
      (d) => d.outcome !== 'queued',
    );
    expect(held.answeredAt).toBeDefined();
    expect(settled).toMatchObject({ outcome: 'turn_started', jobId, turn: before.turn + 1, author: 'octo-member' });
    const job = await waitFor(
      'the turn',
      () => readJob(jobId),
      (j) => j.turn === before.turn + 1 && j.status !== 'active',
    );
    expect(job.turns.map((t: { prompt: string }) => t.prompt).at(-1)).toBe('@docent check the README once more');
    expect(conversation.reactions.slice(reactionsBefore)).toEqual([{ kind: 'issue', commentId: comment.id, content: 'eyes' }]);
    // GitHub's own retry of the delivery is the same delivery: nothing more.
    expect(await (await deliver(gw.url, delivery)).json()).toMatchObject({ outcome: 'duplicate' });
    expect((await readJob(jobId)).turn).toBe(before.turn + 1);
  });

  it('a worker that dies while its delivery waits on GitHub loses nothing: another worker acts on it, once', async () => {
    const before = await readJob(jobId);
    const reactionsBefore = conversation.reactions.length;
    const held = github.holdNext('GET', new RegExp(`^/repos/acme/widgets/pulls/${pull}$`), 10_000);
    const comment = conversation.comment({ kind: 'issue', pull, body: '@docent look at the README again', login: 'octo-member', association: 'MEMBER' });
    const delivery = await signedDelivery(secret, 'issue_comment', issueCommentCreated('acme', 'widgets', github.pulls.find((p) => p.number === pull)!, comment));
    expect((await deliver(gw.url, delivery)).status).toBe(202);
    await waitFor(
      'the held call',
      () => held.arrivedAt,
      (at) => at !== undefined,
    );
    // The worker dies mid-step; the next one takes the step over once the first one's heartbeat is missed.
    await worker.stop('SIGKILL');
    worker = await startWorkerProcess(agentWorkerEnv({ gw, model, github, git, token, workspaceDir }));
    const settled = await waitFor(
      'the delivery settled by the next worker',
      async () => (await deliveries()).find((d) => d.id === delivery.id),
      (d) => d.outcome !== 'queued',
    );
    expect(settled).toMatchObject({ outcome: 'turn_started', jobId, turn: before.turn + 1 });
    const job = await waitFor(
      'the turn',
      () => readJob(jobId),
      (j) => j.turn === before.turn + 1 && j.status !== 'active',
    );
    expect(job).toMatchObject({ status: 'completed', turn: before.turn + 1 });
    expect(conversation.reactions.slice(reactionsBefore)).toEqual([{ kind: 'issue', commentId: comment.id, content: 'eyes' }]);
  });

  it('a merged pull request archives its job, and a later mention is answered that the job is archived', async () => {
    conversation.close(pull, true);
    const pr = github.pulls.find((p) => p.number === pull)!;
    const closed = await signedDelivery(secret, 'pull_request', pullRequestClosed('acme', 'widgets', pr, true));
    expect((await deliverSettled(gw.url, closed, deliveries)).body).toMatchObject({ outcome: 'archived', reason: 'the pull request was merged' });
    expect(await readJob(jobId)).toMatchObject({ status: 'archived', archivedAt: expect.any(String) });
    const { events } = await readEventStream(`${gw.url}/v2/agent/widgets/job/${jobId}/events`, adminKey);
    expect(events.at(-1)).toMatchObject({ type: 'status', data: { status: 'archived', by: 'pull_request_merged' } });

    const late = await commentAndDeliver({ kind: 'issue', pull, body: '@docent one more thing: fix the typo again', login: 'octo-member', association: 'MEMBER' });
    expect(late.body.outcome).toBe('answered_archived');
    const job = await readJob(jobId);
    expect(job).toMatchObject({ status: 'archived', turn: 6 });
    expect(answersOn(pull).at(-1)!.body).toContain('This job is archived: its pull request was merged');
  });
});

describe('deliveries log', () => {
  it('a project sees nothing of another project on its repository: not its webhook deliveries, not its docs domains', async () => {
    const schedules = { temporal: gw.deps.temporal, taskQueuePrefix: gw.deps.config.temporal.taskQueuePrefix, gitBaseUrl: git.url };
    // other's docs follow a branch of acme/widgets that does not exist yet: a sync it starts ends at once.
    await followDocs(schedules, { domain: 'other.widgets.test', repository: 'acme/widgets', ref: 'docs-site', docsPath: 'docs' }, 3_600_000);
    try {
      // GitHub sends a push to both projects' webhooks, each signed with the project's own secret (each syncs only its
      // own project's domains); then one through the global secret.
      const push = (after: string) => ({ ref: 'refs/heads/docs-site', after, before: '0'.repeat(40), repository: { full_name: 'acme/widgets' }, pusher: { name: 'octo-member' } });
      const toWidgets = await signedDelivery(secret, 'push', push('a'.repeat(40)));
      const toOther = await signedDelivery(otherSecret, 'push', push('a'.repeat(40)));
      const global = await signedDelivery(globalSecret, 'push', push('b'.repeat(40)));
      expect((await deliverSettled(gw.url, toWidgets, deliveries)).body).toMatchObject({ id: toWidgets.id, outcome: 'ignored', reason: 'no docs domain of this project follows the pushed branch' });
      expect((await deliverSettled(gw.url, toOther, otherDeliveries)).body).toMatchObject({ id: toOther.id, outcome: 'docs_sync_started', reason: 'docs sync started for other.widgets.test' });
      expect((await deliverSettled(gw.url, global, otherDeliveries)).body).toMatchObject({ outcome: 'docs_sync_started' });

      const widgetsLog = await deliveries();
      const otherLog = await otherDeliveries();
      expect(JSON.stringify(widgetsLog)).not.toContain('other.widgets.test');
      expect(widgetsLog.find((d) => d.id === global.id)).toMatchObject({ outcome: 'ignored', reason: 'no docs domain of this project follows the pushed branch' });
      expect(otherLog.find((d) => d.id === global.id)).toMatchObject({ outcome: 'docs_sync_started', reason: 'docs sync started for other.widgets.test' });
      expect(otherLog.find((d) => d.id === toOther.id)).toMatchObject({ outcome: 'docs_sync_started' });
      const otherIds = otherLog.map((d) => d.id);
      expect(otherIds).not.toContain(toWidgets.id);
      expect(otherLog.filter((d) => d.jobId !== null)).toEqual([]);
      expect(widgetsLog.map((d) => d.id)).not.toContain(toOther.id);
    } finally {
      await unfollowDocs(schedules, 'other.widgets.test');
    }
  });
  it("an issue labeled docent, signed with one project's own secret, starts only that project's issue automation", async () => {
    const issue = { owner: 'acme', repo: 'widgets', number: 950, title: 'Greet the reader', body: 'The README should greet.', html_url: 'https://github.test/acme/widgets/issues/950' };
    // Both projects on the repository have an issue automation; the delivery speaks for one.
    const issueAutomation = { name: 'issues', trigger: { type: 'issue', label: 'docent' }, instruction: 'Resolve the issue.', output: 'pull_request' };
    for (const [key, project] of [
      [adminKey, 'widgets'],
      [otherKey, 'other'],
    ] as const)
      expect((await callApi(gw.url, key, 'POST', `/v2/agent/${project}/automations`, issueAutomation)).status).toBe(201);
    const delivery = await signedDelivery(otherSecret, 'issues', issueLabeled(issue, 'docent', 'octo-member'));
    expect((await deliverSettled(gw.url, delivery, otherDeliveries)).body).toMatchObject({ outcome: 'automation_started' });
    const jobsOf = async (key: string, project: string) => (await (await callApi(gw.url, key, 'GET', `/v2/agent/${project}/jobs?origin=issue`)).json()).jobs as any[];
    expect(await jobsOf(otherKey, 'other')).toHaveLength(1);
    expect(await jobsOf(adminKey, 'widgets')).toEqual([]);
    expect((await deliveries()).map((d) => d.id)).not.toContain(delivery.id);
  });
});

describe('without a webhook secret', () => {
  it('the webhook route is off', async () => {
    const off = await startGateway({});
    try {
      const r = await deliver(off.url, await signedDelivery(secret, 'ping', { zen: 'Keep it logically awesome.' }));
      expect(r.status).toBe(404);
      expect(await r.json()).toEqual({ error: expect.stringContaining('DOCENT_GITHUB_WEBHOOK_SECRET'), code: 'not_found' });
    } finally {
      await off.stop();
    }
  });
});
