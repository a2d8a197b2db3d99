import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { templates } from '../../src/automations/templates';
import { runDocsIngest } from '../../src/cli/docs-ingest';
import { automationScheduleId } from '../../workflows/automation-run-contract';
import { deleteTestIndexes, filesOf, miniDocsFolder } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { type Started, startWorkerProcess } from '../support/process';
import { callApi, sseChunks, v2Body } from '../support/http';
import { poll } from '../support/poll';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings } from '../support/scripted-model';
import { agentWorkerEnv } from '../support/worker-env';

// The built-in templates end to end. gaps: readers' questions the docs cannot answer, an unanswered_questions
// automation's hourly check (its Temporal Schedule, triggered now) through a worker process, and the gap-loop job it
// starts. broken-links: a run whose agent checks the docs' links (an outside one on a real HTTP server) and fixes the
// broken one. Real gateway, worker, Temporal, MongoDB, Elasticsearch and git; the model and the GitHub API are doubles.

const token = 'ghs_docentautogaps0123456789';
const domain = 'docs.glaze.test';
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
let site: http.Server;
let siteUrl: string;
const linksPage = (site: string) => `# Links\n\nRead [the old setup page](./setup.md), [the quickstart](guides/quickstart) and [the API](${site}/api).\n`;

const lastUser = (req: ChatRequest) => JSON.stringify(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
const toolResults = (req: ChatRequest) => req.messages.filter((m) => m.role === 'tool').length;
/** A broken-links run: check, fix the one broken inside link and drop the dead outside one, check again, answer. */
const brokenLinksTurn = (req: ChatRequest): ScriptedTurn => {
  const fixed = '# Links\n\nRead the quickstart: [the quickstart](guides/quickstart), and the API.\n';
  return [
    { toolCalls: [{ name: 'check_links', args: { folder: 'docs' } }] },
    { toolCalls: [{ name: 'write_file', args: { path: 'docs/links.md', content: fixed } }] },
    { toolCalls: [{ name: 'check_links', args: { folder: 'docs' } }] },
    { text: ['Fix two broken links', '\n\ndocs/links.md: ./setup.md (no such page) removed; /api answered 404, link removed.'] },
  ][toolResults(req)]!;
};
const script = (req: ChatRequest): ScriptedTurn => {
  if (JSON.stringify(req.messages.find((m) => m.role === 'user')?.content ?? '').includes('call check_links')) return brokenLinksTurn(req);
  return req.messages.at(-1)?.role === 'tool'
    ? { text: ['Document paying by invoice', '\n\nAdds a billing page that says how to pay for the team plan by invoice.'] }
    : { toolCalls: [{ name: 'write_file', args: { path: 'docs/guides/billing.md', content: newPage } }] };
};

/** A reader asks the assistant, in a thread of its own. */
/** Asks the domain's assistant as a reader at `reader` (behind the trusted proxy), with the public key or another. */
async function ask(text: string, reader = '203.0.113.7', key = asst): Promise<number> {
  const r = await fetch(`${gw.url}/discovery/v2/assistant/${domain}/message`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-forwarded-for': reader },
    body: JSON.stringify(v2Body(text)),
  });
  return sseChunks(await r.text()).filter((c: { type: string }) => c.type === 'source-url').length;
}

beforeAll(async () => {
  site = http.createServer((req, res) => res.writeHead(req.url === '/api' ? 404 : 200).end());
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-autogaps-'));
  await git.createRepo('acme', 'glaze', { 'README.md': '# Glaze\n', ...(await filesOf(miniDocsFolder, 'docs/')), 'docs/links.md': linksPage(siteUrl) });
  // Readers reach the gateway through a proxy on loopback, which says who they are.
  gw = await startGateway({ ...modelSettings(model), DOCENT_GITHUB_GIT_URL: git.url, DOCENT_TRUSTED_PROXY: '127.0.0.1' });
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'glaze', orgId: 'acme', repository: 'acme/glaze', ref: 'main', domain });
  admin = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'glaze' })).key;
  asst = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  // check_links asks outside links through the turn's egress proxy: the project's network is on, and the operator lets
  // sandboxes reach the test's own HTTP server, as it would a private docs host.
  await gw.deps.tenancy.updateChecks('glaze', { network: true });
  worker = await startWorkerProcess({
    ...agentWorkerEnv({ gw, model, github, git, token, workspaceDir }),
    DOCENT_LOG_LEVEL: 'info',
    DOCENT_SANDBOX_EGRESS_ALLOW: `127.0.0.1/32:${(site.address() as AddressInfo).port}`,
  });
  await runDocsIngest(gw.deps.config, { domain, source: miniDocsFolder, baseUrl: 'https://glaze.example' }, () => undefined);
});
afterAll(async () => {
  await worker?.stop('SIGKILL');
  await deleteTestIndexes(gw.deps.config);
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close(), new Promise((resolve) => site?.close(resolve))]);
  await rm(workspaceDir, { recursive: true, force: true });
});

const api = async (method: string, p: string, body?: unknown) => (await callApi(gw.url, admin, method, p, body)).json();

/** Polls with a deadline; a timeout shows the worker's last lines. */
const until = <T>(what: string, read: () => Promise<T>, done: (v: T) => boolean) =>
  poll(what, read, done, 60_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${worker.output.slice(-20).join('\n')}`);
  });

describe('an unanswered_questions automation', () => {
  it('starts one gap-loop job once the domain has threshold unanswered questions, and nothing below it or without new ones', async () => {
    const automation = await api('POST', '/v2/agent/glaze/automations', {
      name: 'fill gaps',
      trigger: { type: 'unanswered_questions', threshold: 2 },
      instruction: 'Fill the gaps readers found.',
      output: 'pull_request',
    });
    const base = `/v2/agent/glaze/automations/${automation.id}`;
    const schedule = gw.deps.temporal.schedule.getHandle(automationScheduleId(gw.deps.config.temporal.taskQueuePrefix, automation.id));
    // Checked hourly; the test asks its schedule for a check now, as an hour passing would.
    expect((await schedule.describe()).state.paused).toBe(false);
    const check = async (previous: string | undefined) => {
      await schedule.trigger();
      return (
        await until(
          'the check',
          () => api('GET', base),
          (a) => a.lastCheck !== undefined && a.lastCheck.at !== previous,
        )
      ).lastCheck;
    };

    expect(await ask(question)).toBe(0);
    const first = await check(undefined);
    expect(first).toMatchObject({ questions: 1, readers: 1, threshold: 2, runId: null, reason: expect.stringContaining('1 of 2 readers') });
    expect((await api('GET', `${base}/runs`)).runs).toEqual([]);

    // The same reader again, and a reader whose key sees restricted pages: still one reader the threshold counts.
    expect(await ask(question)).toBe(0);
    const staff = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain, groups: ['staff'] })).key;
    expect(await ask('Can staff pay the STAFF-ONLY-MARKER invoice plan by team?', '198.51.100.9', staff)).toBe(0);
    const again = await check(first.at);
    expect(again).toMatchObject({ questions: 2, readers: 1, runId: null });

    expect(await ask(question, '203.0.113.99')).toBe(0);
    const second = await check(again.at);
    expect(second).toMatchObject({ questions: 3, readers: 2, runId: expect.any(String) });
    const { runs } = await api('GET', `${base}/runs`);
    expect(runs).toEqual([expect.objectContaining({ id: second.runId, status: 'started', origin: 'unanswered_questions', eventKey: expect.stringMatching(/^unanswered_questions:/) })]);
    const jobs = (await api('GET', `/v2/agent/glaze/jobs?automationId=${automation.id}`)).jobs;
    expect(jobs.map((j: { id: string }) => j.id)).toEqual([runs[0].jobId]);

    // The same job `docent gaps fix` makes: the questions in its instruction after the automation's, and the gap spec
    // that has its branch's docs re-asked in a preview.
    const job = await until(
      'the gap-loop job',
      () => api('GET', `/v2/agent/glaze/job/${runs[0].jobId}`),
      (j) => j.status !== 'active' && j.gapCheck !== undefined,
    );
    expect(job).toMatchObject({ origin: 'unanswered_questions', automationId: automation.id, gap: { domain, questions: [question] } });
    const instruction = lastUser(model.requests.find((q) => lastUser(q).includes('Fill the gaps readers found.'))!);
    // Quoted as data: one line in JSON quotes, inside the block the instruction names; restricted questions left out.
    expect(instruction).toContain(JSON.stringify(`<reader-questions>\n1. ${JSON.stringify(question)} (asked 3 times)`).slice(1, -1));
    expect(instruction).not.toContain('STAFF-ONLY-MARKER');
    expect(job.gapCheck.questions[0]).toMatchObject({ question, before: { answered: false }, after: { answered: true } });

    // No question since that run: the next check starts nothing, and says so.
    const third = await check(second.at);
    expect(third).toMatchObject({ questions: 0, readers: 0, runId: null });
    expect((await api('GET', `${base}/runs`)).runs).toHaveLength(1);
    expect((await api('GET', `/v2/agent/glaze/jobs?automationId=${automation.id}`)).jobs).toHaveLength(1);
  }, 300_000);
});

describe('a broken-links automation', () => {
  it('runs daily, and its job finds the broken links inside and outside the docs and fixes them in a pull request', async () => {
    const body = templates['broken-links']({});
    const automation = await api('POST', '/v2/agent/glaze/automations', body);
    expect(automation).toMatchObject({ trigger: { type: 'schedule', cron: '0 6 * * *', timeZone: 'UTC' }, output: 'update_pull_request' });
    const schedule = gw.deps.temporal.schedule.getHandle(automationScheduleId(gw.deps.config.temporal.taskQueuePrefix, automation.id));
    expect((await schedule.describe()).info.nextActionTimes[0]?.toISOString()).toMatch(/T06:00:00\.000Z$/);

    const before = model.requests.length;
    const { jobId } = await api('POST', `/v2/agent/glaze/automations/${automation.id}/trigger`);
    const job = await until(
      'the broken-links job',
      () => api('GET', `/v2/agent/glaze/job/${jobId}`),
      (j) => j.status !== 'active',
    );
    expect(job).toMatchObject({ status: 'completed', origin: 'automation_manual', automationId: automation.id });

    // What check_links told the agent: the missing page and the outside link that answers 404, nothing else.
    const mine = model.requests.slice(before);
    const firstCheck = JSON.stringify(mine[1]!.messages.at(-1)?.content);
    expect(firstCheck).toContain('./setup.md');
    expect(firstCheck).toContain(`${siteUrl}/api`);
    expect(firstCheck).toContain('answers 404');
    expect(firstCheck).not.toContain('guides/quickstart');
    // After the fix, the second check finds none.
    expect(JSON.stringify(mine[3]!.messages.at(-1)?.content)).toContain('\\"broken\\":[]');

    const pr = github.pulls.find((p) => p.head === `docent/${jobId}`);
    expect(pr?.title).toBe('Fix two broken links');
    const fixed = await git.git('acme', 'glaze', 'show', `docent/${jobId}:docs/links.md`);
    expect(fixed).not.toContain('setup.md');
    expect(fixed).not.toContain(siteUrl);
  }, 300_000);
});
