import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { agentJobWorkflowId } from '../../workflows/agent-job-contract';
import { startGateway, type RunningGateway } from '../support/gateway';
import { createTestApp, type TestApp } from '../support/github-app-double';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';
import { startProcess, type Started } from '../support/process';
import { agentWorkerEnv } from '../support/worker-env';
import { startScriptedModel, type ChatRequest, type ScriptedTurn, type ScriptedModel } from '../support/scripted-model';

// docent as a GitHub App, against a GitHub double that takes only the App's JWTs and the installation tokens it
// issued: a real worker process, real git over HTTP, real Temporal and the bubblewrap sandbox for the checks.

const cli = path.resolve(__dirname, '../../dist/src/cli/main.js');
const sandboxUid = 61007;
let app: TestApp;
let git: GitServer;
let github: GitHubDouble;
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
  const instruction = /Instruction: ([^"\\]*)/.exec(lastUser(req))?.[1] ?? '';
  const word = instruction.split(' ')[0]!;
  if (afterTool(req) || !edits[word]) return { text: `Do ${word}\n\nDid what was asked: ${word}.` };
  return { toolCalls: edits[word]! };
}

function docent(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { env: { ...process.env, DOCENT_MONGO_DB: gw.deps.config.mongo.db, ...env }, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The settings of an App-mode docent: no personal token anywhere. */
const appEnv = (): Record<string, string> => ({
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
  github = await startGitHubDouble({ app, ...backedBy(git) });
  git.acceptTokens(github.gitAllows);
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n\nHello wrold\n' });
  await git.createRepo('acme', 'gadgets', { 'README.md': '# Gadgets\n' });
  await git.createRepo('acme', 'private-tools', { 'README.md': '# Tools\n' });
  // One installation holds two repositories: a job's token must still reach only its own.
  github.install('acme', 'widgets');
  github.install('acme', 'gadgets');
  model = await startScriptedModel(script);
  gw = await startGateway({ DOCENT_MODEL_PROVIDER: 'openai-compatible', DOCENT_MODEL: model.modelId, DOCENT_MODEL_BASE_URL: model.baseUrl, DOCENT_GITHUB_GIT_URL: git.url });
  await gw.deps.tenancy.createOrg('acme');

  const keyFile = path.join(secretsDir, 'app.pem');
  await writeFile(keyFile, app.privateKeyPem);
  await chmod(keyFile, 0o600);
  const env: Record<string, string> = {
    ...agentWorkerEnv({ gw, model, github, git, token: '', workspaceDir }),
    DOCENT_GITHUB_APP_ID: app.id,
    DOCENT_GITHUB_APP_PRIVATE_KEY_FILE: keyFile,
    DOCENT_EMBEDDINGS: 'off',
    DOCENT_LOG_LEVEL: 'info',
    DOCENT_AGENT_REPAIR_ROUNDS: '0',
    DOCENT_SANDBOX_USER: `${sandboxUid}:${sandboxUid}`,
    DOCENT_SANDBOX_TIMEOUT_MS: '10000',
  };
  delete env.DOCENT_GITHUB_TOKEN;
  worker = startProcess('src/worker.js', env);
  await worker.waitForLog((l) => l.msg === 'worker polling');
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  for (const dir of [workspaceDir, secretsDir]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('docent as a GitHub App', () => {
  it('`docent project create` names the install URL for a repository the App is not installed on, and creates one it is', async () => {
    const refused = await docent(appEnv(), 'project', 'create', 'tools', '--org', 'acme', '--repo', 'acme/private-tools', '--ref', 'main', '--domain', 'tools.example.com');
    expect(refused.code).toBe(1);
    expect(github.rejected).toEqual(['404 Not Found']);
    expect(refused.stderr).toContain(`the GitHub App is not installed on acme/private-tools: install it at https://github.test/apps/${app.slug}/installations/new`);
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
    expect(await readdir(workspaceDir)).toEqual([]);
  });

  it('a follow-up that makes the check pass reports success on the new head commit, on the same pull request', async () => {
    const jobId = github.pulls[0]!.head.replace('docent/', '');
    const r = await callApi(gw.url, adminKey, 'POST', `/v2/agent/widgets/job/${jobId}/message`, { prompt: 'add-changelog for the check' });
    expect(r.status).toBe(200);
    const job = await waitForTurn(jobId, 2);
    expect(job).toMatchObject({ status: 'completed', checksPassed: true });
    const head = await branchHead(`docent/${jobId}`);
    const run = github.checkRuns.find((x) => x.headSha === head)!;
    expect(run).toMatchObject({ name: 'docent', status: 'completed', conclusion: 'success', statusHistory: ['in_progress', 'completed'] });
    expect(run.output?.title).toBe('all 1 checks passed');
    expect(github.checkRuns.map((x) => x.conclusion)).toEqual(['failure', 'success']);
    expect(github.pulls).toHaveLength(1);
  });

  it('GitHub rate limits (a secondary limit with retry-after, a primary one with x-ratelimit-reset) are waited out and the calls succeed', async () => {
    github.rateLimitNext('POST', /^\/repos\/acme\/widgets\/pulls$/, { status: 403, retryAfterSeconds: 2 });
    github.rateLimitNext('POST', /^\/repos\/acme\/widgets\/check-runs$/, { status: 429, resetInSeconds: 2 });
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
    // One worker, one repository: one installation token served every step of the three turns.
    expect(github.tokenRequests).toHaveLength(1);
  });
});
