import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startGateway, type RunningGateway } from '../support/gateway';
import { createTestApp, type TestApp } from '../support/github-app-double';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';
import { poll } from '../support/poll';
import { type Started, startWorkerProcess } from '../support/process';
import { recordGitPasswords, writesContributingGuide, type GitPasswordUse } from '../support/forge-jobs';
import { modelSettings, startScriptedModel, type ScriptedModel } from '../support/scripted-model';
import { appWorkerEnv } from '../support/worker-env';

// One organization, two forge connections: a personal token that reaches the `alpha` owner's repositories, and an
// installation of the deployment's GitHub App on the `gamma` account. Each job runs through real gateway, worker and
// Temporal, and the GitHub double and the git server show which credential each clone, push and pull request used.
// The deployment's App, installed on both accounts, serves no organization here but `local`.

const alphaToken = 'ghp_alpha_reaches_alpha_only_0123456';
const secretKey = randomBytes(32).toString('base64');

let app: TestApp;
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let worker: Started;
let workspaceDir: string;
let secretsDir: string;
let operator: string;
let orgOperator: string;
/** Every password git was given, with the repository and whether it pushed. */
let gitUses: GitPasswordUse[];

const call = async (key: string, method: string, p: string, body?: unknown) => {
  const r = await callApi(gw.url, key, method, p, body);
  return { status: r.status, body: (await r.json()) as any };
};

async function runJob(projectId: string, adminKey: string) {
  const created = await call(adminKey, 'POST', `/v2/agent/${projectId}/job`, { prompt: 'add a contributing guide' });
  expect(created.status).toBe(201);
  return poll(
    `the job of ${projectId}`,
    async () => (await call(adminKey, 'GET', `/v2/agent/${projectId}/job/${created.body.id}`)).body,
    (j) => j.status !== 'active',
    90_000,
  );
}

beforeAll(async () => {
  app = createTestApp();
  git = await startGitServer('ghp_git_server_token_nobody_has_000');
  github = await startGitHubDouble({ app, tokens: { [alphaToken]: ['alpha'] }, ...backedBy(git) });
  gitUses = recordGitPasswords(git, github);
  await git.createRepo('alpha', 'site', { 'README.md': '# Alpha\n' });
  await git.createRepo('gamma', 'docs', { 'README.md': '# Gamma\n' });
  github.install('alpha', 'site');
  github.install('gamma', 'docs');
  model = await startScriptedModel(writesContributingGuide);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-forges2-'));
  secretsDir = await mkdtemp(path.join(os.tmpdir(), 'docent-forges2-key-'));
  gw = await startGateway({
    ...modelSettings(model),
    DOCENT_GITHUB_API_URL: github.apiUrl,
    DOCENT_GITHUB_GIT_URL: git.url,
    DOCENT_GITHUB_APP_ID: app.id,
    DOCENT_GITHUB_APP_PRIVATE_KEY: app.privateKeyPem,
    DOCENT_GITHUB_SHARED_ORGS: 'local',
    DOCENT_SECRET_KEY: secretKey,
    DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
  });
  await gw.deps.tenancy.createOrg('team');
  await gw.deps.tenancy.createOrg('outsider');
  operator = (await gw.deps.keys.create({ kind: 'operator', orgId: '*' })).key;
  orgOperator = (await gw.deps.keys.create({ kind: 'operator', orgId: 'team' })).key;
  const workerEnv = { ...(await appWorkerEnv({ gw, model, github, git, workspaceDir, app, secretsDir })), DOCENT_SECRET_KEY: secretKey, DOCENT_GITHUB_SHARED_ORGS: 'local' };
  worker = await startWorkerProcess(workerEnv);
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  await rm(workspaceDir, { recursive: true, force: true });
  await rm(secretsDir, { recursive: true, force: true });
});

it("an organization with a token connection and an App installation connection runs a job on each, each with that connection's own credential", async () => {
  const token = await call(orgOperator, 'POST', '/v2/admin/orgs/team/forges', { kind: 'github', apiUrl: github.apiUrl, gitUrl: git.url, token: alphaToken });
  const installation = await call(operator, 'POST', '/v2/admin/orgs/team/forges', { kind: 'github', appInstallationId: github.installationOf('gamma') });
  expect([token.status, installation.status]).toEqual([201, 201]);

  // A name resolves through the organization's connections in order: alpha's through the token, gamma's through the App.
  const alpha = await call(orgOperator, 'POST', '/v2/admin/projects', { id: 'team-alpha', orgId: 'team', repository: 'alpha/site', ref: 'main', domain: 'alpha.team.test' });
  const gamma = await call(orgOperator, 'POST', '/v2/admin/projects', { id: 'team-gamma', orgId: 'team', repository: 'gamma/docs', ref: 'main', domain: 'gamma.team.test' });
  expect(alpha).toMatchObject({ status: 201, body: { forgeId: token.body.id } });
  expect(gamma).toMatchObject({ status: 201, body: { forgeId: installation.body.id } });
  // Another organization is not lent the App, though it is installed on gamma.
  const outsider = await call(operator, 'POST', '/v2/admin/projects', { id: 'out-gamma', orgId: 'outsider', repository: 'gamma/docs', ref: 'main', domain: 'gamma.out.test' });
  expect(outsider).toMatchObject({ status: 403, body: { code: 'permission_denied' } });

  const alphaKey = (await call(orgOperator, 'POST', '/v2/admin/projects/team-alpha/keys', { kind: 'admin' })).body.key;
  const gammaKey = (await call(orgOperator, 'POST', '/v2/admin/projects/team-gamma/keys', { kind: 'admin' })).body.key;
  const [alphaJob, gammaJob] = await Promise.all([runJob('team-alpha', alphaKey), runJob('team-gamma', gammaKey)]);
  expect(alphaJob).toMatchObject({ status: 'completed', forgeId: token.body.id, prLink: expect.stringContaining('/alpha/site/pull/') });
  expect(gammaJob).toMatchObject({ status: 'completed', forgeId: installation.body.id, prLink: expect.stringContaining('/gamma/docs/pull/') });

  // git: alpha's clone and push with the token only; gamma's with installation tokens of gamma's installation only.
  const used = (repo: string) => gitUses.filter((u) => u.repo === repo);
  expect(used('alpha/site').some((u) => u.push)).toBe(true);
  expect(new Set(used('alpha/site').map((u) => u.token))).toEqual(new Set([alphaToken]));
  expect(used('gamma/docs').some((u) => u.push)).toBe(true);
  expect(used('gamma/docs').every((u) => u.token.startsWith('ghs_') && github.issuedTokens().includes(u.token))).toBe(true);
  // The API: each pull request made with its connection's credential.
  const pullCalls = (repo: string) => new Set(github.calls.filter((c) => c.method === 'POST' && c.path === `/repos/${repo}/pulls`).map((c) => c.credentialId));
  expect(pullCalls('alpha/site')).toEqual(new Set(['pat:alpha']));
  expect(pullCalls('gamma/docs')).toEqual(new Set([`installation:${github.installationOf('gamma')}`]));
  // Every installation token was asked for gamma's installation, never alpha's.
  expect(new Set(github.tokenRequests.map((r) => r.installationId))).toEqual(new Set([github.installationOf('gamma')]));
});
