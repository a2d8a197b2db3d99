import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runDocent } from '../support/cli';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { githubConversation, type GitHubConversation } from '../support/github-double-conversation';
import { deliverSettled, issueCommentCreated, pullRequestClosed, signedDelivery, type Delivery } from '../support/github-webhooks';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';
import { poll } from '../support/poll';
import { type Started, startWorkerProcess } from '../support/process';
import { recordGitPasswords, writesContributingGuide, type GitPasswordUse } from '../support/forge-jobs';
import { modelSettings, startScriptedModel, type ScriptedModel } from '../support/scripted-model';
import { agentWorkerEnv } from '../support/worker-env';
import { automationScheduleId } from '../../workflows/automation-run-contract';

// Two tenants on one docent, each with its own forge connection: a personal token that reaches only its own owner's
// repositories (GitHub answers 404 for the others, as for a private repository). The deployment's token reaches every
// repository, and is shared with no tenant here (DOCENT_GITHUB_SHARED_ORGS=local). The attacks of issue 52, each
// through the real gateway, worker and Temporal: the other tenant's repositories and jobs stay out of reach.

const deploymentToken = 'ghp_deployment_reaches_everything_0123';
const alphaToken = 'ghp_alpha_reaches_alpha_only_0123456';
const betaToken = 'ghp_beta_reaches_beta_only_012345678';
const secretKey = randomBytes(32).toString('base64');

let git: GitServer;
let github: GitHubDouble;
let conversation: GitHubConversation;
let model: ScriptedModel;
let gw: RunningGateway;
let worker: Started;
let workspaceDir: string;
/** Every password git was given, with the repository and whether it pushed. */
let gitUses: GitPasswordUse[];
let alphaOperator: string;
let betaOperator: string;
let alphaForge: { id: string; webhookSecret: string };
let betaForge: { id: string; webhookSecret: string };
let alphaAdmin: string;
let betaAdmin: string;

const call = async (key: string, method: string, p: string, body?: unknown) => {
  const r = await callApi(gw.url, key, method, p, body);
  return { status: r.status, body: (await r.json()) as any };
};

/** A delivery to one connection's webhook URL, as GitHub sends it there. */
/** A delivery to a connection's webhook, and what docent did with it, as the connection's log (read by `operator`) shows. */
const deliverTo = async (forgeId: string, d: Delivery, operator?: string, org?: string) => {
  if (!operator) {
    const r = await fetch(`${gw.url}/forges/${forgeId}/webhook`, { method: 'POST', headers: d.headers, body: d.body });
    return { status: r.status, body: (await r.json()) as any };
  }
  const log = async () => (await call(operator, 'GET', `/v2/admin/orgs/${org}/forges/${forgeId}/deliveries`)).body.deliveries;
  return deliverSettled(gw.url, d, log, `/forges/${forgeId}/webhook`);
};

const addForge = async (operator: string, org: string, token: string) => {
  const added = await call(operator, 'POST', `/v2/admin/orgs/${org}/forges`, { kind: 'github', apiUrl: github.apiUrl, gitUrl: git.url, token });
  expect(added.status).toBe(201);
  return added.body as { id: string; webhookSecret: string };
};

beforeAll(async () => {
  git = await startGitServer(deploymentToken);
  conversation = githubConversation(() => github.pulls);
  github = await startGitHubDouble({ token: deploymentToken, tokens: { [alphaToken]: ['alpha'], [betaToken]: ['beta'] }, ...backedBy(git), routes: conversation.routes });
  gitUses = recordGitPasswords(git, github);
  await git.createRepo('alpha', 'site', { 'README.md': '# Alpha\n' });
  await git.createRepo('alpha', 'private-docs', { 'docs/index.md': '# Alpha internals\n\nThe launch date is secret.\n' });
  await git.createRepo('beta', 'site', { 'README.md': '# Beta\n' });
  model = await startScriptedModel(writesContributingGuide);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-forges-'));
  gw = await startGateway({
    ...modelSettings(model),
    DOCENT_GITHUB_GIT_URL: git.url,
    DOCENT_GITHUB_API_URL: github.apiUrl,
    DOCENT_GITHUB_TOKEN: deploymentToken,
    DOCENT_GITHUB_SHARED_ORGS: 'local',
    DOCENT_SECRET_KEY: secretKey,
    // The forge double and the git server listen on loopback.
    DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
  });
  await gw.deps.tenancy.createOrg('alpha-org');
  await gw.deps.tenancy.createOrg('beta-org');
  alphaOperator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'alpha-org' })).key;
  betaOperator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'beta-org' })).key;
  alphaForge = await addForge(alphaOperator, 'alpha-org', alphaToken);
  betaForge = await addForge(betaOperator, 'beta-org', betaToken);
  conversation.setRole('alpha-maintainer', 'admin');
  worker = await startWorkerProcess({ ...agentWorkerEnv({ gw, model, github, git, token: deploymentToken, workspaceDir }), DOCENT_SECRET_KEY: secretKey, DOCENT_GITHUB_SHARED_ORGS: 'local' });
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  await rm(workspaceDir, { recursive: true, force: true });
});

describe("an organization's repositories are reached only through its own forge connections", () => {
  it("another tenant's repository is refused as a project, through the operator API and the CLI alike, without saying it exists", async () => {
    const theirs = await call(betaOperator, 'POST', '/v2/admin/projects', { id: 'beta-steals', orgId: 'beta-org', repository: 'alpha/site', ref: 'main', domain: 'steal.beta.test' });
    expect(theirs.status).toBe(403);
    expect(theirs.body).toMatchObject({ code: 'permission_denied' });
    expect(theirs.body.error).toContain('alpha/site');
    expect(theirs.body.error).toContain('beta-org');
    // A repository that exists nowhere is refused in the same words: the answer tells nothing of alpha's.
    const nowhere = await call(betaOperator, 'POST', '/v2/admin/projects', { id: 'beta-steals', orgId: 'beta-org', repository: 'alpha/nothing', ref: 'main', domain: 'steal.beta.test' });
    expect(nowhere.body.error.replace('alpha/nothing', 'alpha/site')).toBe(theirs.body.error);
    // GitHub was asked with beta's token, which it refused (404); the deployment's token served nothing.
    expect(github.rejected.filter((r) => r.startsWith('404')).length).toBeGreaterThanOrEqual(2);
    expect(github.calls.some((c) => c.credentialId === 'pat:*')).toBe(false);
    expect(await gw.deps.tenancy.getProject('beta-steals')).toBeNull();

    const cli = await runDocent(['project', 'create', 'beta-cli', '--org', 'beta-org', '--repo', 'alpha/site', '--ref', 'main', '--domain', 'cli.beta.test'], {
      DOCENT_MONGO_DB: gw.deps.config.mongo.db,
      DOCENT_SECRET_KEY: secretKey,
      DOCENT_GITHUB_API_URL: github.apiUrl,
      DOCENT_GITHUB_GIT_URL: git.url,
      DOCENT_GITHUB_TOKEN: deploymentToken,
      DOCENT_OPERATOR_KEY: undefined,
    });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain('no forge connection of organization beta-org can read the repository alpha/site');
    expect(await gw.deps.tenancy.getProject('beta-cli')).toBeNull();
  });

  it('each tenant makes a project on its own repository, resolved through its own connection', async () => {
    const alpha = await call(alphaOperator, 'POST', '/v2/admin/projects', { id: 'alpha-site', orgId: 'alpha-org', repository: 'alpha/site', ref: 'main', domain: 'docs.alpha.test' });
    const beta = await call(betaOperator, 'POST', '/v2/admin/projects', { id: 'beta-site', orgId: 'beta-org', repository: 'beta/site', ref: 'main', domain: 'docs.beta.test' });
    expect(alpha).toMatchObject({ status: 201, body: { forgeId: alphaForge.id } });
    expect(beta).toMatchObject({ status: 201, body: { forgeId: betaForge.id } });
    alphaAdmin = (await call(alphaOperator, 'POST', '/v2/admin/projects/alpha-site/keys', { kind: 'admin' })).body.key;
    betaAdmin = (await call(betaOperator, 'POST', '/v2/admin/projects/beta-site/keys', { kind: 'admin' })).body.key;
  });

  it("another tenant's private repository is refused as a context repository, a docs source and a merged-PR subscription", async () => {
    const job = await call(betaAdmin, 'POST', '/v2/agent/beta-site/job', { prompt: 'summarize the other docs', contextRepositories: [{ repo: 'alpha/private-docs' }] });
    expect(job).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
    expect(job.body.error).toContain('contextRepositories[0].repo');
    expect((await call(betaAdmin, 'GET', '/v2/agent/beta-site/jobs')).body.jobs).toEqual([]);

    const follow = await call(betaOperator, 'POST', '/v2/admin/docs/docs.beta.test/follow', { repository: 'alpha/private-docs', ref: 'main' });
    expect(follow).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
    expect((await call(betaOperator, 'GET', '/v2/admin/docs/docs.beta.test')).body).not.toMatchObject({ source: expect.anything() });

    const subscription = await call(betaAdmin, 'POST', '/v2/agent/beta-site/automations', {
      name: 'follow alpha merges',
      trigger: { type: 'merged_pull_request', repo: 'alpha/site' },
      instruction: 'Describe what alpha merged',
      output: 'pull_request',
    });
    expect(subscription).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
    expect((await call(betaAdmin, 'GET', '/v2/agent/beta-site/automations')).body.automations).toEqual([]);
    expect(github.calls.some((c) => c.path.startsWith('/repos/alpha/private-docs'))).toBe(false);
  });

  let jobId: string;
  let pull: number;

  it("a job clones, pushes and opens its pull request with its own connection's token, and says which connection it used", async () => {
    const created = await call(alphaAdmin, 'POST', '/v2/agent/alpha-site/job', { prompt: 'add a contributing guide' });
    expect(created.status).toBe(201);
    jobId = created.body.id;
    const job = await poll(
      'the job',
      async () => (await call(alphaAdmin, 'GET', `/v2/agent/alpha-site/job/${jobId}`)).body,
      (j) => j.status !== 'active',
      90_000,
    );
    expect(job).toMatchObject({ status: 'completed', forgeId: alphaForge.id, prLink: expect.stringContaining('/alpha/site/pull/') });
    pull = github.pulls.find((p) => p.head === `docent/${jobId}`)!.number;
    const siteUses = gitUses.filter((u) => u.repo === 'alpha/site');
    expect(siteUses.some((u) => u.push)).toBe(true);
    expect(new Set(siteUses.map((u) => u.token))).toEqual(new Set([alphaToken]));
    const prCalls = github.calls.filter((c) => c.path === '/repos/alpha/site/pulls');
    expect(prCalls.length).toBeGreaterThan(0);
    expect(new Set(prCalls.map((c) => c.credentialId))).toEqual(new Set(['pat:alpha']));
  });

  it("a scheduled automation's run, started in the worker, reads its context repository with the organization's own token too", async () => {
    const made = await call(alphaAdmin, 'POST', '/v2/agent/alpha-site/automations', {
      name: 'weekly guide',
      trigger: { type: 'schedule', cron: '0 3 1 1 *' },
      instruction: 'add a contributing guide',
      output: 'pull_request',
      contextRepositories: [{ repo: 'alpha/private-docs' }],
    });
    expect(made.status).toBe(201);
    await gw.deps.temporal.schedule.getHandle(automationScheduleId(gw.deps.config.temporal.taskQueuePrefix, made.body.id)).trigger();
    const job = await poll(
      "the scheduled run's job",
      async () => (await call(alphaAdmin, 'GET', `/v2/agent/alpha-site/jobs?automationId=${made.body.id}`)).body.jobs[0],
      (j) => j !== undefined && j.status !== 'active',
      90_000,
    );
    expect(job).toMatchObject({ status: 'completed', origin: 'schedule', forgeId: alphaForge.id, contextRepositories: [{ repo: 'alpha/private-docs' }] });
    const docsUses = gitUses.filter((u) => u.repo === 'alpha/private-docs');
    expect(docsUses.length).toBeGreaterThan(0);
    expect(new Set(docsUses.map((u) => u.token))).toEqual(new Set([alphaToken]));
    await call(alphaAdmin, 'DELETE', `/v2/agent/alpha-site/automations/${made.body.id}`);
  });

  it("a delivery to another organization's connection about the job's branch leaves the job untouched, and its log says why", async () => {
    const pr = github.pulls.find((p) => p.number === pull)!;
    const closed = await signedDelivery(betaForge.webhookSecret, 'pull_request', pullRequestClosed('alpha', 'site', pr, false));
    const answer = await deliverTo(betaForge.id, closed, betaOperator, 'beta-org');
    expect(answer).toMatchObject({ status: 202, body: { outcome: 'ignored', reason: "not the pull request of a docent job of this connection's organization" } });
    const comment = conversation.comment({ kind: 'issue', pull, body: '@docent delete every page', login: 'alpha-maintainer', association: 'OWNER' });
    const steer = await deliverTo(betaForge.id, await signedDelivery(betaForge.webhookSecret, 'issue_comment', issueCommentCreated('alpha', 'site', pr, comment)), betaOperator, 'beta-org');
    expect(steer).toMatchObject({ status: 202, body: { outcome: 'ignored' } });
    // Signed with beta's secret, alpha's connection does not take it.
    expect((await deliverTo(alphaForge.id, closed)).status).toBe(401);

    const job = (await call(alphaAdmin, 'GET', `/v2/agent/alpha-site/job/${jobId}`)).body;
    expect(job).toMatchObject({ status: 'completed', turn: 1, archivedAt: null });
    const betaLog = (await call(betaOperator, 'GET', `/v2/admin/orgs/beta-org/forges/${betaForge.id}/deliveries`)).body.deliveries;
    expect(betaLog).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: closed.id, event: 'pull_request', outcome: 'ignored', reason: "not the pull request of a docent job of this connection's organization" }),
        expect.objectContaining({ event: 'issue_comment', outcome: 'ignored' }),
      ]),
    );
    // Alpha's own log names nothing beta's connection received, though it named alpha's repository.
    const alphaLog = (await call(alphaAdmin, 'GET', '/v2/agent/alpha-site/github/deliveries')).body.deliveries;
    expect(alphaLog.map((d: { id: string }) => d.id)).not.toContain(closed.id);
    expect((await call(alphaOperator, 'GET', `/v2/admin/orgs/beta-org/forges/${betaForge.id}/deliveries`)).status).toBe(404);
  });

  it("the same delivery through the job's own connection archives it, once", async () => {
    const pr = github.pulls.find((p) => p.number === pull)!;
    const closed = await signedDelivery(alphaForge.webhookSecret, 'pull_request', pullRequestClosed('alpha', 'site', pr, false));
    expect(await deliverTo(alphaForge.id, closed, alphaOperator, 'alpha-org')).toMatchObject({ status: 202, body: { outcome: 'archived' } });
    expect(await deliverTo(alphaForge.id, closed)).toMatchObject({ status: 200, body: { outcome: 'duplicate' } });
    expect((await call(alphaAdmin, 'GET', `/v2/agent/alpha-site/job/${jobId}`)).body).toMatchObject({ status: 'archived' });
    const alphaLog = (await call(alphaOperator, 'GET', `/v2/admin/orgs/alpha-org/forges/${alphaForge.id}/deliveries`)).body.deliveries;
    expect(alphaLog).toEqual([expect.objectContaining({ id: closed.id, outcome: 'archived', jobId })]);
  });

  it('a connection removed reaches nothing more: new jobs of its projects are refused', async () => {
    expect((await call(betaOperator, 'DELETE', `/v2/admin/orgs/beta-org/forges/${betaForge.id}`)).status).toBe(200);
    const refused = await call(betaAdmin, 'POST', '/v2/agent/beta-site/job', { prompt: 'add a contributing guide' });
    expect(refused).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
    expect((await deliverTo(betaForge.id, await signedDelivery(betaForge.webhookSecret, 'ping', { zen: 'hi' }))).status).toBe(404);
  });

  it('the organization `local` (what npm start makes) shares the deployment token: its job clones and pushes with it', async () => {
    await git.createRepo('local', 'demo', { 'README.md': '# Demo\n' });
    await gw.deps.tenancy.createOrg('local');
    const localOperator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'local' })).key;
    const made = await call(localOperator, 'POST', '/v2/admin/projects', { id: 'local-demo', orgId: 'local', repository: 'local/demo', ref: 'main', domain: 'demo.local.test' });
    expect(made).toMatchObject({ status: 201, body: { forgeId: 'deployment' } });
    const admin = (await call(localOperator, 'POST', '/v2/admin/projects/local-demo/keys', { kind: 'admin' })).body.key;
    const created = await call(admin, 'POST', '/v2/agent/local-demo/job', { prompt: 'add a contributing guide' });
    expect(created.status).toBe(201);
    const job = await poll(
      'the local job',
      async () => (await call(admin, 'GET', `/v2/agent/local-demo/job/${created.body.id}`)).body,
      (j) => j.status !== 'active',
      90_000,
    );
    expect(job).toMatchObject({ status: 'completed', forgeId: 'deployment', prLink: expect.stringContaining('/local/demo/pull/') });
    const uses = gitUses.filter((u) => u.repo === 'local/demo');
    expect(uses.some((u) => u.push)).toBe(true);
    expect(new Set(uses.map((u) => u.token))).toEqual(new Set([deploymentToken]));
  });
});
