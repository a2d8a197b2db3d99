import { randomBytes } from 'node:crypto';
import { freePort } from '../support/free-port';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runDocent, runDocentIn } from '../support/cli';
import { sameStack } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { giteaBuildWaitMs, type LocalGitea, startGitea } from '../support/gitea';
import { poll } from '../support/poll';
import { type Started, startWorkerProcess } from '../support/process';
import { type ChatRequest, modelSettings, type ScriptedModel, type ScriptedTurn, startScriptedModel } from '../support/scripted-model';

// What `npm start` does once the local Gitea is up (infra/run.sh, src/cli/local-forge.ts), and then the README's first
// job: from a clean database, `docent local-forge` twice, then the README's one request with the admin key it saved,
// which opens a real pull request on a real Gitea through the real gateway, worker and Temporal.

const secretKey = randomBytes(32).toString('base64');
const sample = path.resolve(__dirname, '../../infra/docent-demo');
const readmePrompt = 'Fix the typo in the README';

let gitea: LocalGitea;
let model: ScriptedModel;
let gw: RunningGateway;
let worker: Started;
let dir: string;
let workspaceDir: string;
let keyFile: string;
let tokenFile: string;
let cliEnv: Record<string, string>;
/** The model as `npm start` configures it from DOCENT_MODEL_BASE_URL and DOCENT_MODEL_API_KEY alone (`docent local-model`). */
let modelEnv: Record<string, string>;

/** The agent reads the README, fixes "documentaton", and says so. */
function script(req: ChatRequest): ScriptedTurn {
  if (req.messages.at(-1)?.role === 'tool') return { text: 'Fix the typo in the README\n\n"documentaton" is now "documentation".' };
  return { toolCalls: [{ name: 'write_file', args: { path: 'README.md', content: readme.replace('documentaton', 'documentation') } }] };
}
let readme: string;

/** `docent local-model` with exactly these settings: the KEY=VALUE lines it prints. */
async function pickedModel(env: Record<string, string>): Promise<Record<string, string>> {
  const run = await runDocentIn(['local-model'], { PATH: process.env.PATH, DOCENT_LOG_LEVEL: 'silent', ...env });
  expect(run.code).toBe(0);
  return Object.fromEntries(
    run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]),
  );
}

const localForge = () => runDocent(['local-forge', '--gitea-url', gitea.url, '--token-file', tokenFile, '--sample', sample, '--key-file', keyFile], cliEnv);

/** The README's first job, as it is written there: one POST with the saved admin key. */
const firstJob = async (url: string) =>
  fetch(`${url}/v2/agent/demo/job`, {
    method: 'POST',
    headers: { authorization: `Bearer ${(await readFile(keyFile, 'utf8')).trim()}`, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: readmePrompt }),
  });

beforeAll(async () => {
  gitea = await startGitea();
  readme = await readFile(path.join(sample, 'README.md'), 'utf8');
  model = await startScriptedModel(script);
  dir = await mkdtemp(path.join(os.tmpdir(), 'docent-local-forge-'));
  // Its own folder: the sandbox's user must reach it, and `dir` is its owner's alone.
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-local-forge-ws-'));
  keyFile = path.join(dir, 'cache', 'demo-admin-key');
  tokenFile = path.join(dir, 'admin-token');
  await writeFile(tokenFile, gitea.token, { mode: 0o600 });
  const given = { DOCENT_MODEL_BASE_URL: model.baseUrl, DOCENT_MODEL_API_KEY: model.apiKey };
  modelEnv = { ...given, ...(await pickedModel(given)) };
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  gw = await startGateway({ ...modelEnv, DOCENT_HTTP_PORT: String(port), DOCENT_PUBLIC_URL: publicUrl, DOCENT_SECRET_KEY: secretKey, DOCENT_GITHUB_SHARED_ORGS: 'local' });
  cliEnv = sameStack(gw.deps.config, { DOCENT_SECRET_KEY: secretKey, DOCENT_PUBLIC_URL: publicUrl, DOCENT_GITHUB_SHARED_ORGS: 'local', DOCENT_LOG_LEVEL: 'silent' });
  worker = await startWorkerProcess({
    ...sameStack(gw.deps.config),
    ...modelEnv,
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
  for (const d of [dir, workspaceDir]) if (d) await rm(d, { recursive: true, force: true });
});

describe('the local forge and a first job (npm start, README)', () => {
  it('makes local/docent-demo on Gitea, its connection, the project demo and a 0600 admin key; a second run changes nothing', async () => {
    const first = await localForge();
    expect(first.stderr).toContain('local/docent-demo');
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).toBe(`${gitea.url}/local/docent-demo`);
    const key = (await readFile(keyFile, 'utf8')).trim();
    expect(key).toMatch(/^docent_admin_/);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    // Neither the key nor Gitea's token is printed.
    for (const out of [first.stdout, first.stderr]) {
      expect(out).not.toContain(key);
      expect(out).not.toContain(gitea.token);
    }

    const again = await localForge();
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe(`${gitea.url}/local/docent-demo`);
    expect((await readFile(keyFile, 'utf8')).trim()).toBe(key);

    const forges = await gw.deps.forges.store.list('local');
    expect(forges).toEqual([expect.objectContaining({ kind: 'gitea', apiUrl: `${gitea.url}/api/v1`, gitUrl: gitea.url })]);
    expect(await gw.deps.tenancy.getProject('demo')).toMatchObject({ orgId: 'local', repository: 'local/docent-demo', forgeId: forges[0]!.id, ref: 'main' });
    // One commit of the sample project (README and docs/), and one webhook to this gateway.
    const commits = (await gitea.api('GET', '/repos/local/docent-demo/commits?sha=main')).body as any[];
    expect(commits).toHaveLength(1);
    const docs = (await gitea.api('GET', '/repos/local/docent-demo/contents/docs?ref=main')).body as any[];
    expect(docs.map((f) => f.name).sort()).toEqual(['index.md', 'install.md', 'options.md']);
    const hooks = (await gitea.api('GET', '/repos/local/docent-demo/hooks')).body as any[];
    expect(hooks.map((h) => h.config.url)).toEqual([`${gw.deps.config.publicUrl}/forges/${forges[0]!.id}/webhook`]);
  }, 120_000);

  it('takes a model from its server or its key alone, as npm start does', async () => {
    // The server's address and key: the first model it lists (here the scripted model's).
    expect(modelEnv).toEqual(modelSettings(model));
    expect(await pickedModel({ DOCENT_MODEL_API_KEY: 'sk-ant-api03-test' })).toEqual({ DOCENT_MODEL_PROVIDER: 'anthropic', DOCENT_MODEL: 'claude-sonnet-4-5' });
    expect(await pickedModel({ DOCENT_MODEL_API_KEY: 'sk-proj-test', DOCENT_MODEL: 'gpt-4.1-mini' })).toEqual({ DOCENT_MODEL_PROVIDER: 'openai', DOCENT_MODEL: 'gpt-4.1-mini' });
    // A model configured already, or nothing to go on: nothing printed.
    expect(await pickedModel(modelSettings(model))).toEqual({});
    expect(await pickedModel({})).toEqual({});
  });

  it("the README's first-job request opens a pull request on the local Gitea", async () => {
    const created = await firstJob(gw.url);
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const key = (await readFile(keyFile, 'utf8')).trim();
    const done = await poll(
      'the first job',
      async () => (await (await fetch(`${gw.url}/v2/agent/demo/job/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as any,
      (j) => j.status !== 'active',
      120_000,
    );
    expect(done).toMatchObject({
      status: 'completed',
      source: { repository: `${gitea.url}/local/docent-demo`, ref: done.branch, name: 'local/docent-demo', baseRef: 'main' },
      prLink: expect.stringMatching(new RegExp(`^${gitea.url}/local/docent-demo/pulls/\\d+$`)),
    });
    const number = Number(done.prLink.split('/').pop());
    const pr = (await gitea.api('GET', `/repos/local/docent-demo/pulls/${number}`)).body;
    expect(pr).toMatchObject({ state: 'open', head: { ref: done.branch }, base: { ref: 'main' }, html_url: done.prLink });
    const diff = (await gitea.api('GET', `/repos/local/docent-demo/pulls/${number}.diff`)).body as string;
    expect(diff).toContain('+The documentation is in');
  }, 180_000);

  it('a Gitea made again (another token in the file) gets a new connection, and the project moves to it', async () => {
    const [before] = await gw.deps.forges.store.list('local');
    const key = (await readFile(keyFile, 'utf8')).trim();
    // Another site admin's token, as a Gitea whose data folder was made again would write into the file.
    const password = `pw-${randomBytes(8).toString('hex')}`;
    expect((await gitea.api('POST', '/admin/users', { username: 'second-admin', email: 'second-admin@example.test', password, must_change_password: false })).status).toBe(201);
    expect((await gitea.api('PATCH', '/admin/users/second-admin', { admin: true, login_name: 'second-admin', source_id: 0 })).status).toBe(200);
    const made = await fetch(`${gitea.url}/api/v1/users/second-admin/tokens`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`second-admin:${password}`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'docent', scopes: ['all'] }),
    });
    expect(made.status).toBe(201);
    await writeFile(tokenFile, ((await made.json()) as { sha1: string }).sha1, { mode: 0o600 });

    const run = await localForge();
    expect(run.code).toBe(0);
    const forges = await gw.deps.forges.store.list('local');
    expect(forges).toHaveLength(1);
    expect(forges[0]!.id).not.toBe(before!.id);
    expect(await gw.deps.tenancy.getProject('demo')).toMatchObject({ forgeId: forges[0]!.id });
    expect((await readFile(keyFile, 'utf8')).trim()).toBe(key);
    const hooks = (await gitea.api('GET', '/repos/local/docent-demo/hooks')).body as any[];
    expect(hooks.map((h) => h.config.url)).toContain(`${gw.deps.config.publicUrl}/forges/${forges[0]!.id}/webhook`);
  }, 60_000);

  it('without a model, the same request answers 400 naming the settings to give', async () => {
    const bare = await startGateway({ DOCENT_MONGO_DB: gw.deps.config.mongo.db, DOCENT_SECRET_KEY: secretKey, DOCENT_MODEL_PROVIDER: '', DOCENT_MODEL: '' });
    try {
      const refused = await firstJob(bare.url);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({
        code: 'failed_precondition',
        error: 'no model is configured: set DOCENT_MODEL_PROVIDER and DOCENT_MODEL (or DOCENT_MODELS, a list of models) to run agent jobs (docs/configuration.md)',
      });
    } finally {
      await bare.stop({ keepDatabase: true });
    }
  }, 60_000);
});
