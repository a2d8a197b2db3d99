import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { agentJobWorkflowId } from '../../workflows/agent-job-contract';
import { runDocent } from '../support/cli';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';
import { type Started, startWorkerProcess } from '../support/process';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings } from '../support/scripted-model';
import { agentWorkerEnv } from '../support/worker-env';

// A project secret set through the CLI, used by a real setup step in a real bubblewrap sandbox on a real worker
// process: the step gets the value; the agent's run_command, the model, the job record, its events and turns, the pull
// request, Temporal's history and the worker's log never see it, raw or in base64.

const token = 'ghs_secretstesttoken0123456789';
const secretKey = randomBytes(32).toString('base64');
const value = `dpl_${randomBytes(12).toString('hex')}`;
/** Every form the value could be printed in. */
const forms = [value, Buffer.from(value).toString('base64').replace(/=+$/, ''), Buffer.from(value).toString('base64url')];
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let worker: Started;
let workspaceDir: string;
let adminKey: string;

const firstUser = (req: ChatRequest) => JSON.stringify(req.messages.find((m) => m.role === 'user')?.content ?? '');

function script(req: ChatRequest): ScriptedTurn {
  if (req.messages.some((m) => m.role === 'tool') || !firstUser(req).includes('Instruction: fix-typo')) return { text: 'Fix the typo\n\nHello world.' };
  return {
    toolCalls: [
      {
        name: 'run_command',
        args: {
          command:
            'echo "agent sees [$DEPLOY_TOKEN]"; cat "$HOME/leak" 2>&1; for f in a/b/c/d/e/deep-hex big.log wrapped-auth; do test -e "$HOME/$f" && echo "still there: $f"; done; cat .npmrc; echo run-done',
        },
      },
      { name: 'read_file', args: { path: '.npmrc' } },
      { name: 'edit_file', args: { path: 'README.md', old: 'wrold', new: 'world' } },
    ],
  };
}

const docent = (args: string[], stdin: string, env: Record<string, string> = {}) => runDocent(args, { DOCENT_MONGO_DB: gw.deps.config.mongo.db, DOCENT_SECRET_KEY: secretKey, ...env }, stdin);

async function runJob(prompt: string): Promise<any> {
  const r = await callApi(gw.url, adminKey, 'POST', '/v2/agent/secretive/job', { prompt });
  expect(r.status).toBe(201);
  const { id } = await r.json();
  const deadline = Date.now() + 100_000;
  for (;;) {
    const job = await (await callApi(gw.url, adminKey, 'GET', `/v2/agent/secretive/job/${id}`)).json();
    if (job.status !== 'active') return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still active: ${JSON.stringify(job)}\n${worker.output.slice(-20).join('\n')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Byte arrays (Temporal payloads) shown as text, so a value inside a payload is found too. */
const asText = (v: unknown) => JSON.stringify(v, (_k, x) => (x instanceof Uint8Array ? Buffer.from(x).toString('utf8') : x));

function expectNoSecret(where: string, text: string): void {
  for (const form of forms) if (text.includes(form)) throw new Error(`${where} holds the secret (${form === value ? 'raw' : 'base64'})`);
}

beforeAll(async () => {
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);
  // An ignored file survives the reset between check rounds, as installed dependencies do.
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n\nHello wrold\n', '.gitignore': '.env\n' });
  gw = await startGateway({
    DOCENT_SECRET_KEY: secretKey,
    ...modelSettings(model),
    DOCENT_GITHUB_GIT_URL: git.url,
  });
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'secretive', orgId: 'acme', repository: 'acme/widgets', ref: 'main' });
  await gw.deps.tenancy.updateChecks('secretive', {
    setup: [
      // The command holds only the value's digest, so the value itself is known to nothing but the secret store.
      `[ "$(printf %s "$DEPLOY_TOKEN" | sha256sum | cut -c1-64)" = "${createHash('sha256').update(value).digest('hex')}" ] && echo verified > "$HOME/token-ok"; echo "token is $DEPLOY_TOKEN"; printf %s "$DEPLOY_TOKEN" | base64; printf %s "$DEPLOY_TOKEN" > "$HOME/leak"; mkdir -p "$HOME/a/b/c/d/e" && printf 'key=%s\\n' "$(printf %s "$DEPLOY_TOKEN" | od -An -tx1 | tr -d ' \\n')" > "$HOME/a/b/c/d/e/deep-hex"; { head -c 2097152 /dev/zero | tr '\\0' x; printf '\\n%s\\n' "$DEPLOY_TOKEN"; } > "$HOME/big.log"; printf %s "user:$DEPLOY_TOKEN" | base64 -w 8 > "$HOME/wrapped-auth"; echo "//registry/:_authToken=$DEPLOY_TOKEN" > .npmrc; echo "TOKEN=$DEPLOY_TOKEN" > .env`,
    ],
    check: ['test -f "$HOME/token-ok"', 'echo "check sees [$DEPLOY_TOKEN]"; cat .env; exit 1'],
  });
  adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'secretive' })).key;
  worker = await startWorkerProcess({
    ...agentWorkerEnv({ gw, model, github, git, token, workspaceDir }),
    DOCENT_SECRET_KEY: secretKey,
    DOCENT_EMBEDDINGS: 'off',
    DOCENT_SANDBOX_USER: '61002:61002',
    DOCENT_AGENT_REPAIR_ROUNDS: '1',
  });
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  if (workspaceDir) await rm(workspaceDir, { recursive: true, force: true });
});

describe('project secrets for setup', () => {
  it('the CLI stores the value from standard input, sealed, and lists only names', async () => {
    const set = await docent(['project', 'secret', 'set', 'secretive', 'DEPLOY_TOKEN'], `${value}\n`);
    expect(set).toMatchObject({ code: 0, stdout: 'set secret DEPLOY_TOKEN of project secretive; setup commands get it as $DEPLOY_TOKEN\n' });
    const stored = await gw.deps.mongo.db.collection('project_secrets').find({ projectId: 'secretive' }).toArray();
    expect(stored).toHaveLength(1);
    expectNoSecret('the stored secret', JSON.stringify(stored));
    const list = await docent(['project', 'secret', 'list', 'secretive', '--json'], '');
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([{ name: 'DEPLOY_TOKEN', updatedAt: expect.any(String) }]);
  });

  it('a setup step gets the secret; checks, the agent and everything that leaves the sandbox do not', async () => {
    const job = await runJob('fix-typo using the deploy token');
    expect(job).toMatchObject({ status: 'completed', checksPassed: false });
    const [setup, usesSetup, echoes] = job.checks;
    expect(setup).toMatchObject({ kind: 'setup', exitCode: 0 });
    expect(setup.output).toContain('token is [secret DEPLOY_TOKEN]');
    expect(setup.output).toContain('[secret DEPLOY_TOKEN]\n'); // the base64 line
    // The setup step saw the right value; the check, without --secret-to-checks, saw none.
    expect(usesSetup).toMatchObject({ kind: 'check', exitCode: 0 });
    expect(echoes.output).toContain('check sees []');
    expect(echoes.output).toContain('TOKEN=[secret DEPLOY_TOKEN]');

    const toolResults = model.requests.flatMap((q) => q.messages.filter((m) => m.role === 'tool')).map((m) => JSON.stringify(m.content));
    expect(toolResults.join('\n')).toContain('agent sees []');
    expect(toolResults.join('\n')).toContain('run-done');
    // The file the setup step left in HOME was removed before the agent started.
    expect(toolResults.join('\n')).toMatch(/leak: No such file or directory/);
    // Files of any depth and size, and a secret wrapped across lines, were found too.
    expect(toolResults.join('\n')).not.toContain('still there');
    expect(toolResults.join('\n')).toContain('_authToken=[secret DEPLOY_TOKEN]');
    const repair = model.requests.find((q) => JSON.stringify(q.messages.at(-1)).includes('checks failed'));
    expect(JSON.stringify(repair)).toContain('check sees []');
    expect(JSON.stringify(repair)).toContain('TOKEN=[secret DEPLOY_TOKEN]');

    const pr = github.pulls.find((p) => p.html_url === job.prLink)!;
    expect(pr.body).toContain('[secret DEPLOY_TOKEN]');
    expect(pr.body).toContain('Left out of this change because they hold a project secret: `.npmrc`');
    expect(pr.body).toContain('Removed from HOME after setup because they hold a project secret: `~/a/b/c/d/e/deep-hex`, `~/big.log`, `~/leak`, `~/wrapped-auth`');
    expect((await git.git('acme', 'widgets', 'diff', '--name-only', 'main', `docent/${job.id}`)).trim()).toBe('README.md');

    const db = gw.deps.mongo.db;
    const history = await gw.deps.temporal.workflow.getHandle(agentJobWorkflowId(job.id)).fetchHistory();
    const seen: Record<string, string> = {
      'the job as the API returns it': JSON.stringify(job),
      'the job record': JSON.stringify(await db.collection('jobs').find({ _id: job.id }).toArray()),
      'the job events': JSON.stringify(await db.collection('job_events').find({ jobId: job.id }).toArray()),
      'the turns': JSON.stringify(await db.collection('job_turns').find({ jobId: job.id }).toArray()),
      'the model requests': JSON.stringify(model.requests),
      'the pull requests': JSON.stringify(github.pulls),
      "the workflow's history": asText(history),
      "the worker's log": worker.output.join('\n'),
    };
    for (const [where, text] of Object.entries(seen)) expectNoSecret(where, text);
    expect(github.rejected).toEqual([]);
    expect(model.rejected).toEqual([]);
  });

  it('checks get the secret once the project says --secret-to-checks on', async () => {
    const update = await docent(['project', 'update', 'secretive', '--secret-to-checks', 'on'], '');
    expect(update.stdout).toContain('secrets to checks: on');
    // The CLI wrote past the gateway's lookup cache: wait until the gateway reads the change.
    while (!(await gw.deps.tenancy.getProject('secretive'))?.secretsToChecks) await new Promise((r) => setTimeout(r, 50));
    const job = await runJob('fix-typo with secrets for checks');
    expect(job.checks[2].output).toContain('check sees [[secret DEPLOY_TOKEN]]');
    expectNoSecret('the job', JSON.stringify(job));
    expectNoSecret("the worker's log", worker.output.join('\n'));
  });
});
