import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { toJson } from '@bufbuild/protobuf';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AgentJobSchema, AgentService } from '../../src/gen/agent/v2/agent_pb';
import type { ThreadDoc } from '../../src/assistant/threads';
import { runDocsIngest } from '../../src/cli/docs-ingest';
import { runDocent } from '../support/cli';
import { deleteTestIndexes, filesOf, miniDocsFolder } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { type Started, startWorkerProcess } from '../support/process';
import { callApi, sseChunks, v2Body } from '../support/http';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings } from '../support/scripted-model';
import { agentWorkerEnv } from '../support/worker-env';

// The gap loop end to end: a question the fixture docs cannot answer → `POST …/gaps/fix` → an agent job (scripted
// model) writes a page → its branch is ingested into a preview index → the question is re-asked there → the result is
// on the job and on the pull request (GitHub double). Real gateway, worker process, Temporal, Elasticsearch and git.

const token = 'ghs_docentgaploop0123456789';
const domain = 'docs.kiln.test';
const question = 'Can we pay for the team plan by invoice?';
const newPage = '---\ntitle: Billing\n---\n\n# Billing\n\n## Pay by invoice\n\nTeams can pay for the team plan by invoice instead of by card: ask for yearly invoicing in the billing settings.\n';
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let worker: Started;
let workspaceDir: string;
let admin: string;
let asst: string;

const lastUser = (req: ChatRequest) => JSON.stringify(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
// The agent writes the page, then answers with the title and summary of the pull request.
const script = (req: ChatRequest): ScriptedTurn =>
  req.messages.at(-1)?.role === 'tool'
    ? { text: ['Document paying by invoice', '\n\nAdds a billing page that says how to pay for the team plan by invoice, which readers asked.'] }
    : { toolCalls: [{ name: 'write_file', args: { path: 'docs/guides/billing.md', content: newPage } }] };

const ask = async (text: string) => {
  const r = await fetch(`${gw.url}/discovery/v2/assistant/${domain}/message`, {
    method: 'POST',
    headers: { authorization: `Bearer ${asst}`, 'content-type': 'application/json' },
    body: JSON.stringify(v2Body(text)),
  });
  const chunks = sseChunks(await r.text());
  return { threadId: r.headers.get('x-thread-id')!, sources: chunks.filter((c: { type: string }) => c.type === 'source-url').length };
};

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-gaps-'));
  await git.createRepo('acme', 'kiln', { 'README.md': '# Kiln\n', ...(await filesOf(miniDocsFolder, 'docs/')) });
  gw = await startGateway({ ...modelSettings(model), DOCENT_GITHUB_GIT_URL: git.url });
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'kiln', orgId: 'acme', repository: 'acme/kiln', ref: 'main', domain });
  admin = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'kiln' })).key;
  asst = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  worker = await startWorkerProcess({ ...agentWorkerEnv({ gw, model, github, git, token, workspaceDir }), DOCENT_LOG_LEVEL: 'info' });
  // The live docs: the same pages as the repository's docs/ folder, ingested as an operator would.
  await runDocsIngest(gw.deps.config, { domain, source: miniDocsFolder, baseUrl: 'https://kiln.example' }, () => undefined);
});
afterAll(async () => {
  await worker?.stop('SIGKILL');
  await deleteTestIndexes(gw.deps.config);
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  await rm(workspaceDir, { recursive: true, force: true });
});

async function waitForJob(jobId: string, done: (job: any) => boolean, timeoutMs = 120_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await (await callApi(gw.url, admin, 'GET', `/v2/agent/kiln/job/${jobId}`)).json();
    if (done(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${JSON.stringify(job)} after ${timeoutMs} ms\n${worker.output.slice(-30).join('\n')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('the gap loop', () => {
  it('turns a question the docs cannot answer into a pull request that provably answers it', async () => {
    const before = await ask(question);
    expect(before.sources).toBe(0);
    const thread = await gw.deps.mongo.db.collection<ThreadDoc>('threads').findOne({ _id: before.threadId });
    expect(thread!.turns[0]!.answered).toBe(false);

    const r = await callApi(gw.url, admin, 'POST', '/v2/agent/kiln/gaps/fix', { since: '1d', docsPath: 'docs' }, { 'idempotency-key': 'gaps-week-47' });
    expect(r.status).toBe(201);
    const created = await r.json();
    // A retried request (same Idempotency-Key) gets the same job, never a second one.
    const retried = await callApi(gw.url, admin, 'POST', '/v2/agent/kiln/gaps/fix', { since: '1d', docsPath: 'docs' }, { 'idempotency-key': 'gaps-week-47' });
    expect(retried.status).toBe(200);
    expect((await retried.json()).job.id).toBe(created.job.id);
    expect(created.questions).toEqual([expect.objectContaining({ question, count: 1 })]);
    expect(created.job.gap).toEqual({ domain, questions: [question], threadIds: [before.threadId] });
    expect(r.headers.get('location')).toBe(`/v2/agent/kiln/job/${created.job.id}`);

    const job = await waitForJob(created.job.id, (j) => j.status !== 'active');
    expect(job.status).toBe('completed');
    expect(job.prLink).toMatch(/^https:\/\/github\.test\/acme\/kiln\/pull\/\d+$/);

    // The agent's instruction carried the question and what the docs return for it today.
    const instruction = lastUser(model.requests[0]!);
    expect(instruction).toContain(question);
    expect(instruction).toContain('Passages the docs return for it today');
    expect(instruction).toContain('under `docs/`');

    // Re-asked against the branch's docs in a preview index: unanswered before, answered by the new page after.
    expect(job.gapCheck).toMatchObject({ turn: 1, fixed: 1, previewIndex: expect.stringContaining('preview-') });
    const [check] = job.gapCheck.questions;
    expect(check.question).toBe(question);
    expect(check.before).toMatchObject({ answered: false, topPath: null });
    expect(check.after).toMatchObject({ answered: true, topPath: 'guides/billing' });
    expect(check.after.relevance).toBeGreaterThan(check.before.relevance);
    // The preview served the check and is gone: no index is left behind per job.
    expect(await gw.deps.es.indices.existsAlias({ name: job.gapCheck.previewIndex })).toBe(false);
    expect(Object.keys(await gw.deps.es.indices.get({ index: `${job.gapCheck.previewIndex}-*` }))).toEqual([]);

    // The pull request got one comment with the before/after, through the GitHub API.
    const pr = github.pulls.find((p) => job.prLink.endsWith(`/pull/${p.number}`))!;
    const comments = github.comments.filter((c) => c.issue === pr.number);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain('1 of 1 unanswered questions answered by this branch');
    expect(comments[0]!.body).toContain(question);
    expect(github.rejected).toEqual([]);
    expect(model.rejected).toEqual([]);

    // A Connect client reads the same link and proof: REST's nulls are unset fields, and false or 0 count as set here.
    const connect = createClient(AgentService, createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' }));
    const { job: message } = await connect.getAgentJob({ projectId: 'kiln', jobId: job.id }, { headers: { authorization: `Bearer ${admin}` } });
    const viaConnect = toJson(AgentJobSchema, message!, { alwaysEmitImplicit: true }) as any;
    const withoutNulls = (v: unknown) => JSON.parse(JSON.stringify(v, (_k, x) => (x === null ? undefined : x)));
    expect(viaConnect.gap).toEqual(job.gap);
    expect({ ...viaConnect.gapCheck, checkedAt: new Date(viaConnect.gapCheck.checkedAt).toISOString() }).toEqual(withoutNulls(job.gapCheck));

    // The preview never reaches readers: the live docs still do not answer until the pull request is merged and ingested.
    expect((await ask(question)).sources).toBe(0);
  });

  it('refuses when there is nothing to fix, a domain that is not the project’s, and a docs path out of the repository', async () => {
    await gw.deps.tenancy.createProject({ _id: 'quiet', orgId: 'acme', repository: 'acme/kiln', ref: 'main', domain: 'docs.quiet.test' });
    const quietAdmin = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'quiet' })).key;
    const nothing = await callApi(gw.url, quietAdmin, 'POST', '/v2/agent/quiet/gaps/fix', {});
    expect(nothing.status).toBe(400);
    expect(await nothing.json()).toMatchObject({ code: 'failed_precondition', error: expect.stringContaining('no unanswered or down-rated questions') });
    const other = await callApi(gw.url, admin, 'POST', '/v2/agent/kiln/gaps/fix', { domain: 'docs.other.test' });
    expect(other.status).toBe(400);
    expect(await other.json()).toMatchObject({ code: 'invalid_argument', error: expect.stringContaining('docs.kiln.test') });
    const traversal = await callApi(gw.url, admin, 'POST', '/v2/agent/kiln/gaps/fix', { docsPath: '../etc' });
    expect(traversal.status).toBe(400);
  });

  it('`docent gaps fix`, run as a process, creates the agent job for the unanswered question, prints it with how to follow it, exits 0, and the job opens its pull request', async () => {
    const unanswered = await ask(question);
    expect(unanswered.sources).toBe(0);
    const run = await runDocent(['gaps', 'fix', '--domain', domain, '--project', 'kiln', '--since', '1d', '--docs-path', 'docs'], { DOCENT_API_URL: gw.url, DOCENT_API_KEY: admin });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const [header, ...rest] = run.stdout.trimEnd().split('\n');
    const jobId = /^created agent job (job_\S+) for 1 question\(s\):$/.exec(header!)?.[1];
    expect(jobId).toBeDefined();
    // The question, counted once per asking in the window (earlier tests of this file may have asked it too).
    expect(rest).toEqual([expect.stringMatching(new RegExp(`^ +\\d+  ${question.replace(/[?.]/g, '\\$&')}$`)), `follow it with: docent jobs watch kiln ${jobId}`]);
    const job = await waitForJob(jobId!, (j) => j.status !== 'active');
    expect(job).toMatchObject({ status: 'completed', prLink: expect.stringMatching(/^https:\/\/github\.test\/acme\/kiln\/pull\/\d+$/) });
    expect(job.gap).toMatchObject({ domain, questions: [question], threadIds: expect.arrayContaining([unanswered.threadId]) });
  });

  it('`docent gaps fix`, run as a process, exits 1 with the refusal when there is nothing to fix, and 2 without its options', async () => {
    const quietAdmin = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'quiet' })).key;
    const env = { DOCENT_API_URL: gw.url, DOCENT_API_KEY: quietAdmin };
    await gw.deps.tenancy.createProject({ _id: 'quiet', orgId: 'acme', repository: 'acme/kiln', ref: 'main', domain: 'docs.quiet.test' }).catch(() => undefined);
    const nothing = await runDocent(['gaps', 'fix', '--domain', 'docs.quiet.test', '--project', 'quiet'], env);
    expect(nothing).toMatchObject({ code: 1, stdout: '' });
    expect(nothing.stderr).toContain('no unanswered or down-rated questions');
    const usage = await runDocent(['gaps', 'fix', '--project', 'quiet'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--domain and --project are required');
  });
});
