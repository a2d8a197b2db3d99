import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkRunOutput } from '../../activities/agent-job/github';
import { agentJobWorkflowId } from '../../workflows/agent-job-contract';
import { runDocent } from '../support/cli';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi } from '../support/http';
import { type Started, startWorkerProcess } from '../support/process';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings } from '../support/scripted-model';
import { agentWorkerEnv } from '../support/worker-env';

// Issue 33, finding 2: a follow-up turn starts from the job's branch, whose commits the model made. Turn 1 commits a
// package.json postinstall that prints the project's secret in hex, in base64 at an offset, as npm's `_auth`
// (base64 of "user:" + token) and raw, placed so the 4 KiB cut of the output falls inside it. Turn 2's setup runs that
// postinstall: it gets no secret. With the operator's override (turn 3) it does, and no form reaches the model, the job
// events, Temporal's history, the pull request or the check run.

const token = 'ghs_agentcodetesttoken0123456789';
const secretKey = randomBytes(32).toString('base64');
const value = `dpl_${randomBytes(16).toString('hex')}`;
const bytes = Buffer.from(value);
/** What leak.js prints, as each form would show up (the edges of a base64 form mix in its neighbours' bits). */
const forms: Record<string, string> = {
  raw: value,
  'the half after the 4 KiB cut': value.slice(-12),
  hex: bytes.toString('hex'),
  'upper-case hex': bytes.toString('hex').toUpperCase(),
  'base64 after one byte': Buffer.concat([Buffer.from('x'), bytes])
    .toString('base64')
    .slice(4, -4),
  'base64 of user:token': Buffer.from(`user:${value}`).toString('base64').slice(8, -4),
};

/** Prints every form, the raw value last but 4 KiB from the end so a tail of 4096 bytes starts 12 bytes into it. */
const leakJs = `const v = process.env.DEPLOY_TOKEN || '';
const b = Buffer.from(v);
const lines = ['hex ' + b.toString('hex'), 'HEX ' + b.toString('hex').toUpperCase(), 'b64 ' + Buffer.concat([Buffer.from('x'), b]).toString('base64'), 'auth ' + Buffer.from('user:' + v).toString('base64'), 'got ' + (v ? 'a token' : 'no token'), ''].join('\\n');
process.stdout.write('start ' + v + '\\n' + 'y'.repeat(Math.max(0, 4096 - 12 - 2 - Buffer.byteLength(lines))) + '\\n' + lines);
process.exitCode = 1;
`;
const hostilePackage = JSON.stringify({ name: 'widgets', version: '1.0.0', private: true, scripts: { postinstall: 'node leak.js' } }, null, 2);

let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let worker: Started;
let workspaceDir: string;
let adminKey: string;

const opening = (req: ChatRequest) => JSON.stringify(req.messages.find((m) => m.role === 'user')?.content ?? '');
const answered = (req: ChatRequest) => req.messages.some((m) => m.role === 'tool') || req.messages.filter((m) => m.role === 'user').length > 1;

function script(req: ChatRequest): ScriptedTurn {
  if (answered(req)) return { text: 'Widgets\n\nDone.' };
  const text = opening(req);
  if (text.includes('Instruction: turn-three')) return { toolCalls: [{ name: 'write_file', args: { path: 'NOTES.md', content: 'three\n' } }] };
  if (text.includes('Instruction: turn-two')) return { toolCalls: [{ name: 'edit_file', args: { path: 'README.md', old: 'wrold', new: 'world' } }] };
  return {
    toolCalls: [
      { name: 'write_file', args: { path: 'package.json', content: hostilePackage } },
      { name: 'write_file', args: { path: 'leak.js', content: leakJs } },
    ],
  };
}

/** The compiled `docent` command on the gateway's database; a command that reads a secret reads `value`. */
const docent = (args: string[]) => runDocent(args, { DOCENT_MONGO_DB: gw.deps.config.mongo.db, DOCENT_SECRET_KEY: secretKey }, `${value}\n`);

async function job(id: string): Promise<any> {
  return (await callApi(gw.url, adminKey, 'GET', `/v2/agent/hostile/job/${id}`)).json();
}

/** Waits until the job has finished its `turns`-th turn. */
async function turnDone(id: string, turns: number): Promise<any> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const j = await job(id);
    if (j.status !== 'active' && j.turns?.length === turns && j.turns.at(-1).finishedAt) return j;
    if (Date.now() > deadline) throw new Error(`job ${id} turn ${turns} unfinished: ${JSON.stringify(j)}\n${worker.output.slice(-20).join('\n')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function followUp(id: string, prompt: string, turns: number): Promise<any> {
  const r = await callApi(gw.url, adminKey, 'POST', `/v2/agent/hostile/job/${id}/message`, { prompt });
  expect(r.status).toBe(200);
  return turnDone(id, turns);
}

/** Byte arrays (Temporal payloads) shown as text, so a value inside a payload is found too. */
const asText = (v: unknown) => JSON.stringify(v, (_k, x) => (x instanceof Uint8Array ? Buffer.from(x).toString('utf8') : x));

async function everywhere(id: string): Promise<Record<string, string>> {
  const db = gw.deps.mongo.db;
  const history = await gw.deps.temporal.workflow.getHandle(agentJobWorkflowId(id)).fetchHistory();
  return {
    'the model requests': JSON.stringify(model.requests),
    'the job events': JSON.stringify(await db.collection('job_events').find({ jobId: id }).toArray()),
    'the job record and turns':
      JSON.stringify(await db.collection<{ _id: string }>('jobs').find({ _id: id }).toArray()) + JSON.stringify(await db.collection('job_turns').find({ jobId: id }).toArray()),
    'the job as the API returns it': JSON.stringify(await job(id)),
    "the workflow's history": asText(history),
    'the pull request': JSON.stringify(github.pulls) + JSON.stringify(github.comments),
    // A token reports a commit status; with the App, the check run's text is built from the same results.
    'the commit statuses and check runs': JSON.stringify(github.statuses) + JSON.stringify(github.checkRuns) + JSON.stringify(checkRunOutput((await job(id)).checks)),
    "the worker's log": worker.output.join('\n'),
  };
}

function expectNoForm(seen: Record<string, string>): void {
  const found = Object.entries(seen).flatMap(([where, text]) => Object.entries(forms).flatMap(([form, printed]) => (text.includes(printed) ? [`${where}: ${form}`] : [])));
  expect(found).toEqual([]);
}

beforeAll(async () => {
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);
  await git.createRepo('acme', 'widgets', {
    'README.md': '# Widgets\n\nHello wrold\n',
    'package.json': JSON.stringify({ name: 'widgets', version: '1.0.0', private: true }, null, 2),
    '.gitignore': 'node_modules\npackage-lock.json\n',
  });
  gw = await startGateway({
    DOCENT_SECRET_KEY: secretKey,
    ...modelSettings(model),
    DOCENT_GITHUB_GIT_URL: git.url,
  });
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'hostile', orgId: 'acme', repository: 'acme/widgets', ref: 'main' });
  await gw.deps.tenancy.updateChecks('hostile', {
    setup: ['npm install --offline --foreground-scripts --no-audit --no-fund'],
    // The check runs leak.js once the model has written it, with the secret (--secret-to-checks on).
    check: ['if [ -f leak.js ]; then node leak.js; fi'],
    secretsToChecks: true,
  });
  adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'hostile' })).key;
  expect((await docent(['project', 'secret', 'set', 'hostile', 'DEPLOY_TOKEN'])).code).toBe(0);
  worker = await startWorkerProcess({
    ...agentWorkerEnv({ gw, model, github, git, token, workspaceDir }),
    DOCENT_SECRET_KEY: secretKey,
    DOCENT_EMBEDDINGS: 'off',
    DOCENT_SANDBOX_USER: '61033:61033',
    DOCENT_AGENT_REPAIR_ROUNDS: '1',
  });
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  if (workspaceDir) await rm(workspaceDir, { recursive: true, force: true });
});

describe('secrets and code the model wrote', () => {
  let jobId: string;

  it('turn 1 starts at the base ref: its setup has the secret; the postinstall the model commits prints it only redacted', async () => {
    const r = await callApi(gw.url, adminKey, 'POST', '/v2/agent/hostile/job', { prompt: 'turn-one: add a postinstall' });
    expect(r.status).toBe(201);
    jobId = (await r.json()).id;
    const first = await turnDone(jobId, 1);
    expect(first.checks).toMatchObject([
      { kind: 'setup', exitCode: 0 },
      { kind: 'check', exitCode: 1 },
    ]);
    // The check ran the model's leak.js with the secret: every form is replaced, the one across the cut too.
    const check = first.checks[1].output;
    expect(check).toContain('got a token');
    expect(check).toMatch(/hex \[secret DEPLOY_TOKEN\]\nHEX \[secret DEPLOY_TOKEN\]\nb64 .{0,4}\[secret DEPLOY_TOKEN\]/);
    expect(check).toMatch(/auth .{0,8}\[secret DEPLOY_TOKEN\]/);
    // The agent's repair round names the failed check but gets none of its output.
    const repair = model.requests.find((q) => JSON.stringify(q.messages.at(-1)).includes('checks failed'));
    expect(JSON.stringify(repair?.messages.at(-1))).toContain('Its output is not shown to you because it ran with the project');
    expect(JSON.stringify(repair?.messages.at(-1))).not.toContain('got a token');
    expect((await git.git('acme', 'widgets', 'show', `docent/${jobId}:package.json`)).trim()).toBe(hostilePackage);
    expectNoForm(await everywhere(jobId));
  });

  it("turn 2 starts from the model's commits: its setup runs the postinstall without the secret, and says so", async () => {
    const second = await followUp(jobId, 'turn-two: fix the typo', 2);
    const [setup, check] = second.checks;
    expect(setup).toMatchObject({ kind: 'setup', exitCode: 1 });
    expect(setup.output).toMatch(/^\[docent\] the project's secrets were withheld: this turn starts from commits the agent made/);
    expect(setup.output).toContain('got no token');
    expect(check.output).toContain('got no token');
    // Output of a command that had no secret still reaches the agent, so it can fix its setup.
    const told = model.requests.find((q) => opening(q).includes('Instruction: turn-two'));
    expect(opening(told!)).toContain('got no token');
    expectNoForm(await everywhere(jobId));
  });

  it('with --secrets-on-agent-code on (and a warning), it does get the secret, and still nothing leaks', async () => {
    expect(await docent(['project', 'update', 'hostile', '--secrets-on-agent-code', 'yes'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--secrets-on-agent-code must be on or off') });
    const update = await docent(['project', 'update', 'hostile', '--secrets-on-agent-code', 'on']);
    expect(update).toMatchObject({ code: 0 });
    expect(update.stdout).toContain('secrets on agent code: on');
    expect(update.stderr).toContain("code the model wrote (a package.json script, a test) runs with the project's secrets");
    while (!(await gw.deps.tenancy.getProject('hostile'))?.secretsForAgentCode) await new Promise((r) => setTimeout(r, 50));

    const third = await followUp(jobId, 'turn-three: write notes', 3);
    const [setup] = third.checks;
    expect(setup).toMatchObject({ kind: 'setup', exitCode: 1 });
    expect(setup.output).toContain('got a token');
    expect(setup.output).toContain('hex [secret DEPLOY_TOKEN]');
    // The agent hears that setup failed, and not what it printed.
    const told = model.requests.find((q) => opening(q).includes('Instruction: turn-three'));
    expect(opening(told!)).toContain('npm install --offline --foreground-scripts --no-audit --no-fund');
    expect(opening(told!)).toContain('Its output is not shown to you because it ran with the project');
    expect(opening(told!)).not.toContain('got a token');
    expectNoForm(await everywhere(jobId));
    expect(github.statuses.length).toBeGreaterThan(0);
    expect(github.rejected).toEqual([]);
    expect(model.rejected).toEqual([]);
  });
});
