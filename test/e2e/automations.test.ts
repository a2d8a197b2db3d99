import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Code, ConnectError } from '@connectrpc/connect';
import { ScheduleNotFoundError } from '@temporalio/client';
import { createDocentClient } from '../../src/client';
import { AutomationRunner } from '../../src/automations/automation-runner';
import { AutomationStore } from '../../src/automations/automation-store';
import { automationScheduleId } from '../../workflows/automation-run-contract';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi, type JsonResponse } from '../support/http';
import { poll } from '../support/poll';
import { type Started, startWorkerProcess } from '../support/process';
import { agentWorkerEnv } from '../support/worker-env';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn, modelSettings } from '../support/scripted-model';
import { startReceiver } from '../support/webhook-receiver';

/** The file's polls: up to 90 s, as a job's turn may take under the suite's load. */
const until = <T>(what: string, read: () => T | Promise<T>, done: (v: T) => boolean, timeoutMs = 90_000) => poll(what, read, done, timeoutMs);

// Automations through the gateway over sockets, a worker process and real Temporal (its Schedules too), MongoDB and
// git over HTTP; only the model provider and the GitHub API are doubles.

const token = 'ghs_docenttesttoken0123456789';
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let workspaceDir: string;
let worker: Started;
let adminKey: string;
// Webhook secrets are sealed with this key; the test's receiver listens on loopback, which only the second lets docent call.
const webhookSettings = { DOCENT_SECRET_KEY: randomBytes(32).toString('base64'), DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8' };

const lastUser = (req: ChatRequest) => JSON.stringify(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
const afterTool = (req: ChatRequest) => req.messages.at(-1)?.role === 'tool';

let notes = 0;

function script(req: ChatRequest): ScriptedTurn {
  if (lastUser(req).includes('add a note')) {
    if (afterTool(req)) return { text: `Add note ${notes}\n\nOne more note.` };
    notes++;
    return { toolCalls: [{ name: 'write_file', args: { path: 'NOTES.md', content: `note ${notes}\n` } }] };
  }
  if (lastUser(req).includes('fix the typo')) {
    return afterTool(req) ? { text: ['Fix typo in README', '\n\nCorrected "wrold" to "world".'] } : { toolCalls: [{ name: 'edit_file', args: { path: 'README.md', old: 'wrold', new: 'world' } }] };
  }
  return { text: 'No change needed\n\nThe repository already does what was asked.' };
}

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script);
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n\nHello wrold\n' });
  gw = await startGateway({
    ...modelSettings(model),
    DOCENT_GITHUB_GIT_URL: git.url,
    DOCENT_AUTOMATION_RUNS_PER_DAY: '2',
    ...webhookSettings,
  });
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'widgets', orgId: 'acme', repository: 'acme/widgets', ref: 'main' });
  adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'widgets' })).key;
  worker = await startWorkerProcess({ ...agentWorkerEnv({ gw, model, github, git, token, workspaceDir }), ...webhookSettings });
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close()]);
  await rm(workspaceDir, { recursive: true, force: true });
});

const api = (method: string, p: string, body?: unknown): Promise<JsonResponse> => callApi(gw.url, adminKey, method, p, body);
const base = '/v2/agent/widgets/automations';

const runsOf = async (id: string) =>
  (await (await api('GET', `${base}/${id}/runs`)).json()).runs as Array<{ id: string; status: string; jobId: string | null; reason: string | null; origin: string; eventKey: string }>;
const jobIds = async (query: string) => ((await (await api('GET', `/v2/agent/widgets/jobs?${query}`)).json()).jobs as Array<{ id: string }>).map((j) => j.id).sort();
const schedule = (id: string) => gw.deps.temporal.schedule.getHandle(automationScheduleId(gw.deps.config.temporal.taskQueuePrefix, id));

/** A 6-field cron (a fixed second first) that fires once a year, next `secondsAhead` from now, in UTC. */
function cronAt(secondsAhead: number): string {
  const t = new Date(Date.now() + secondsAhead * 1000);
  return `${t.getUTCSeconds()} ${t.getUTCMinutes()} ${t.getUTCHours()} ${t.getUTCDate()} ${t.getUTCMonth() + 1} *`;
}

const manual = { name: 'typo fixer', trigger: { type: 'manual' }, instruction: 'fix the typo in the README', output: 'pull_request' };

describe('automations', () => {
  let scheduled: { id: string };
  let scheduledJobId: string;
  let manualAutomation: { id: string };
  let manualJobId: string;
  let apiJobId: string;

  it('refuses unknown fields, a cron Temporal would not read and an unknown time zone with 400 and stores nothing', async () => {
    const bodies = [
      { ...manual, color: 'blue' },
      { ...manual, trigger: { type: 'schedule', cron: 'every day', timeZone: 'UTC' } },
      // Five fields, but no minute 61: Temporal's own parser refuses it.
      { ...manual, trigger: { type: 'schedule', cron: '61 * * * *', timeZone: 'UTC' } },
      { ...manual, trigger: { type: 'schedule', cron: '0 3 * * *', timeZone: 'Mars/Olympus_Mons' } },
      { ...manual, trigger: { type: 'webhook' } },
      // Temporal reads these, and ran the first one every second: a year field, a range of seconds.
      { ...manual, trigger: { type: 'schedule', cron: '* * * * * * 2099', timeZone: 'UTC' } },
      { ...manual, trigger: { type: 'schedule', cron: '*/10 * * * * *', timeZone: 'UTC' } },
      // Five fields, but more often than every 5 minutes (DOCENT_AUTOMATION_MIN_INTERVAL_MINUTES).
      { ...manual, trigger: { type: 'schedule', cron: '* * * * *', timeZone: 'UTC' } },
      { ...manual, trigger: { type: 'schedule', cron: '0,2 9 * * 1', timeZone: 'UTC' } },
    ];
    for (const body of bodies) {
      const r = await api('POST', base, body);
      expect({ body, status: r.status }).toEqual({ body, status: 400 });
      expect(await r.json()).toMatchObject({ code: 'invalid_argument', error: expect.any(String) });
    }
    expect((await (await api('GET', base)).json()).automations).toEqual([]);
    const often = await api('POST', base, { ...manual, trigger: { type: 'schedule', cron: '0,2 9 * * 1', timeZone: 'UTC' } });
    expect((await often.json()).error).toBe('trigger.cron: 0,2 9 * * 1 runs 120 s apart at its closest; a schedule may run at most every 5 minutes (DOCENT_AUTOMATION_MIN_INTERVAL_MINUTES)');
    // Every 5 minutes is allowed, and so is a fixed second.
    for (const cron of ['*/5 * * * *', '30 0 3 * * *']) {
      const r = await api('POST', base, { ...manual, trigger: { type: 'schedule', cron, timeZone: 'UTC' } });
      expect({ cron, status: r.status }).toEqual({ cron, status: 201 });
      expect((await api('DELETE', `${base}/${(await r.json()).id}`)).status).toBe(200);
    }
  });

  it('a project has at most DOCENT_AUTOMATIONS_PER_PROJECT automations: one more is 429, and stores nothing', async () => {
    await gw.deps.tenancy.createProject({ _id: 'busy', orgId: 'acme', repository: 'acme/widgets', ref: 'main' });
    const busyKey = (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'busy' })).key;
    const busy = (method: string, p: string, body?: unknown) => callApi(gw.url, busyKey, method, `/v2/agent/busy/automations${p}`, body);
    for (let i = 0; i < 50; i++) expect((await busy('POST', '', { ...manual, name: `manual ${i}` })).status).toBe(201);
    const over = await busy('POST', '', { ...manual, name: 'one too many' });
    expect(over.status).toBe(429);
    expect(await over.json()).toMatchObject({ code: 'resource_exhausted', error: expect.stringContaining('has 50 automations') });
    expect((await (await busy('GET', '')).json()).automations).toHaveLength(50);
  });

  it('accepts every trigger type and stores it as sent', async () => {
    const triggers = [
      { type: 'push', branch: 'main' },
      { type: 'merged_pull_request', repo: 'acme/code' },
      { type: 'issue', label: 'docent' },
      { type: 'unanswered_questions', threshold: 5 },
    ];
    for (const trigger of triggers) {
      const r = await api('POST', base, { ...manual, trigger, contextRepositories: [{ repo: 'acme/code', ref: 'main' }] });
      expect(r.status).toBe(201);
      const created = await r.json();
      expect(created).toMatchObject({ trigger, paused: false, consecutiveFailures: 0, lastError: null, contextRepositories: [{ repo: 'acme/code', ref: 'main' }] });
      expect(r.headers.get('location')).toBe(`${base}/${created.id}`);
      expect((await api('DELETE', `${base}/${created.id}`)).status).toBe(200);
    }
  });

  it('a cron automation due in seconds opens a pull request through its Temporal Schedule', async () => {
    const r = await api('POST', base, { ...manual, name: 'nightly typo fix', trigger: { type: 'schedule', cron: cronAt(8), timeZone: 'UTC' } });
    expect(r.status).toBe(201);
    scheduled = await r.json();
    expect((await schedule(scheduled.id).describe()).state.paused).toBe(false);

    const [run] = await until(
      'the scheduled run',
      () => runsOf(scheduled.id),
      (runs) => runs.some((x) => x.jobId),
    );
    expect(run).toMatchObject({ status: 'started', origin: 'schedule', eventKey: expect.stringMatching(/^schedule:/) });
    scheduledJobId = run!.jobId!;
    const job = await until(
      'the scheduled job',
      async () => (await api('GET', `/v2/agent/widgets/job/${scheduledJobId}`)).json(),
      (j) => j.status !== 'active',
    );
    expect(job).toMatchObject({ status: 'completed', origin: 'schedule', automationId: scheduled.id });
    expect(job.prLink).toBe(github.pulls.find((p) => p.head === `docent/${scheduledJobId}`)?.html_url);
  });

  it('POST …/trigger runs an automation now: 202 with the jobId of an automation_manual job', async () => {
    manualAutomation = await (await api('POST', base, manual)).json();
    const r = await api('POST', `${base}/${manualAutomation.id}/trigger`);
    expect(r.status).toBe(202);
    const run = await r.json();
    manualJobId = run.jobId;
    const job = await (await api('GET', `/v2/agent/widgets/job/${manualJobId}`)).json();
    expect(job).toMatchObject({ origin: 'automation_manual', automationId: manualAutomation.id });
    expect(await runsOf(manualAutomation.id)).toEqual([expect.objectContaining({ id: run.id, status: 'started', jobId: manualJobId })]);
  });

  it('the jobs list filtered by origin and by automation returns exactly those jobs', async () => {
    apiJobId = (await (await api('POST', '/v2/agent/widgets/job', { prompt: 'say nothing' })).json()).id;
    expect((await (await api('GET', `/v2/agent/widgets/job/${apiJobId}`)).json()).origin).toBe('api');
    expect(await jobIds('origin=schedule')).toEqual([scheduledJobId]);
    expect(await jobIds(`automationId=${scheduled.id}`)).toEqual([scheduledJobId]);
    expect(await jobIds(`automationId=${manualAutomation.id}`)).toEqual([manualJobId]);
    expect(await jobIds('origin=automation_manual')).toEqual([manualJobId]);
    expect(await jobIds('origin=api')).toEqual([apiJobId]);
    expect((await api('GET', '/v2/agent/widgets/jobs?origin=carrier_pigeon')).status).toBe(400);
  });

  it('a paused automation starts nothing: its schedule pauses, and a run that still arrives is refused and recorded', async () => {
    const paused = await (await api('POST', `${base}/${scheduled.id}/pause`)).json();
    expect(paused.paused).toBe(true);
    expect((await schedule(scheduled.id).describe()).state.paused).toBe(true);
    // An action already on its way when the pause came: Temporal starts the run workflow regardless.
    await schedule(scheduled.id).trigger();
    const runs = await until(
      'the refused run',
      () => runsOf(scheduled.id),
      // Claimed first (`starting`), then finished: the assertion is about the finished run.
      (rs) => rs.length === 2 && rs[0]!.status !== 'starting',
    );
    expect(runs[0]).toMatchObject({ status: 'refused', jobId: null, reason: 'the automation is paused', origin: 'schedule' });

    const manualPaused = await api('POST', `${base}/${manualAutomation.id}/pause`);
    expect(manualPaused.status).toBe(200);
    const refused = await api('POST', `${base}/${manualAutomation.id}/trigger`);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: 'failed_precondition', error: expect.stringContaining('paused') });
    expect((await runsOf(manualAutomation.id))[0]).toMatchObject({ status: 'refused', reason: 'the automation is paused' });
    expect(await jobIds(`automationId=${scheduled.id}`)).toEqual([scheduledJobId]);
    expect(await jobIds(`automationId=${manualAutomation.id}`)).toEqual([manualJobId]);

    expect((await (await api('POST', `${base}/${scheduled.id}/resume`)).json()).paused).toBe(false);
    expect((await schedule(scheduled.id).describe()).state.paused).toBe(false);
  });

  it('PATCH changes the schedule with the automation, and DELETE removes both', async () => {
    const r = await api('PATCH', `${base}/${scheduled.id}`, { trigger: { type: 'schedule', cron: '0 3 * * 1', timeZone: 'Europe/Berlin' } });
    expect(r.status).toBe(200);
    expect((await r.json()).trigger).toEqual({ type: 'schedule', cron: '0 3 * * 1', timeZone: 'Europe/Berlin' });
    const spec = (await schedule(scheduled.id).describe()).spec;
    expect(spec.timezone).toBe('Europe/Berlin');
    expect((await api('PATCH', `${base}/${scheduled.id}`, { trigger: { type: 'schedule', cron: '0 25 * * *', timeZone: 'UTC' } })).status).toBe(400);
    expect((await (await api('GET', `${base}/${scheduled.id}`)).json()).trigger.cron).toBe('0 3 * * 1');

    expect((await api('DELETE', `${base}/${scheduled.id}`)).status).toBe(200);
    await expect(schedule(scheduled.id).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect((await api('GET', `${base}/${scheduled.id}`)).status).toBe(404);
  });

  it('runs per automation per day are capped, and the refusal is recorded', async () => {
    const capped = await (await api('POST', base, { ...manual, name: 'capped', instruction: 'say nothing' })).json();
    expect((await api('POST', `${base}/${capped.id}/trigger`)).status).toBe(202);
    expect((await api('POST', `${base}/${capped.id}/trigger`)).status).toBe(202);
    const third = await api('POST', `${base}/${capped.id}/trigger`);
    expect(third.status).toBe(429);
    expect((await third.json()).error).toContain('DOCENT_AUTOMATION_RUNS_PER_DAY');
    const runs = await runsOf(capped.id);
    expect(runs.map((x) => x.status)).toEqual(['refused', 'started', 'started']);
  });

  it('a run whose job cannot be admitted is a failure: counted on the automation with its last error, and sent as automation.run_failed', async () => {
    const receiver = await startReceiver(() => 204);
    const endpoint = await (await api('POST', '/v2/agent/widgets/webhooks', { url: receiver.url, events: ['automation.run_started', 'automation.run_failed'] })).json();
    receiver.setSecret(endpoint.secret);
    const broken = await (await api('POST', base, { ...manual, name: 'broken', model: 'no-such-model' })).json();
    for (const expected of [1, 2]) {
      const r = await api('POST', `${base}/${broken.id}/trigger`);
      expect(r.status).toBe(400);
      const after = await (await api('GET', `${base}/${broken.id}`)).json();
      expect(after).toMatchObject({ consecutiveFailures: expected, lastError: { message: expect.stringContaining('no-such-model') } });
    }
    expect((await runsOf(broken.id)).map((x) => [x.status, x.jobId])).toEqual([
      ['failed', null],
      ['failed', null],
    ]);
    // A run that starts its job again sets the count back.
    expect((await api('PATCH', `${base}/${broken.id}`, { model: model.modelId })).status).toBe(200);
    expect((await api('POST', `${base}/${broken.id}/trigger`)).status).toBe(202);
    expect((await (await api('GET', `${base}/${broken.id}`)).json()).consecutiveFailures).toBe(0);

    const deliveries = await until(
      'the three run webhooks',
      async () => receiver.received.map((d) => d),
      (d) => d.length === 3,
      30_000,
    );
    await receiver.close();
    await api('DELETE', `/v2/agent/widgets/webhooks/${endpoint.id}`);
    const byFailures = deliveries.map((d) => [d.verified, d.body.type, d.body.data.automation.id, d.body.data.automation.consecutiveFailures]).sort((a, b) => Number(a[3]) - Number(b[3]));
    expect(byFailures).toEqual([
      [true, 'automation.run_started', broken.id, 0],
      [true, 'automation.run_failed', broken.id, 1],
      [true, 'automation.run_failed', broken.id, 2],
    ]);
    const failed = deliveries.find((d) => d.body.data.automation.consecutiveFailures === 2)!;
    expect(failed.body.data).toMatchObject({ automation: { lastError: { message: expect.stringContaining('no-such-model') } }, run: { status: 'failed', jobId: null } });
  });

  it('the typed Connect client manages and runs an automation, and lists its jobs by automation and origin', async () => {
    const client = createDocentClient({ baseUrl: gw.url, apiKey: adminKey });
    const refused = await client.automations
      .createAutomation({ projectId: 'widgets', name: 'bad', trigger: { type: 'schedule', cron: '61 * * * *' }, instruction: 'x', output: 'pull_request' })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.InvalidArgument);

    const { automation } = await client.automations.createAutomation({ projectId: 'widgets', name: 'over connect', trigger: { type: 'manual' }, instruction: 'say nothing', output: 'pull_request' });
    expect(automation).toMatchObject({ name: 'over connect', trigger: { type: 'manual' }, paused: false });
    const { run } = await client.automations.triggerAutomation({ projectId: 'widgets', automationId: automation!.id });
    expect(run).toMatchObject({ status: 'started', origin: 'automation_manual' });
    const { jobs } = await client.agent.listAgentJobs({ projectId: 'widgets', automationId: automation!.id });
    expect(jobs.map((j) => [j.id, j.origin, j.automationId])).toEqual([[run!.jobId, 'automation_manual', automation!.id]]);
    const schedJobs = await client.agent.listAgentJobs({ projectId: 'widgets', origin: 'schedule' });
    expect(schedJobs.jobs.map((j) => j.id)).toEqual([scheduledJobId]);
    expect((await client.automations.listAutomationRuns({ projectId: 'widgets', automationId: automation!.id })).runs.map((r) => r.jobId)).toEqual([run!.jobId]);
    expect((await client.automations.pauseAutomation({ projectId: 'widgets', automationId: automation!.id })).automation?.paused).toBe(true);
    await client.automations.deleteAutomation({ projectId: 'widgets', automationId: automation!.id });
    const gone = await client.automations.getAutomation({ projectId: 'widgets', automationId: automation!.id }).catch((err: unknown) => err);
    expect((gone as ConnectError).code).toBe(Code.NotFound);
  });

  it('an update_pull_request automation adds its next run to its open pull request, as a follow-up turn', async () => {
    const automation = await (await api('POST', base, { ...manual, name: 'notes', instruction: 'add a note', output: 'update_pull_request' })).json();
    const readJob = (id: string) => async () => (await api('GET', `/v2/agent/widgets/job/${id}`)).json();
    const first = await (await api('POST', `${base}/${automation.id}/trigger`)).json();
    expect(first.turn).toBe(1);
    const opened = await until('the first run', readJob(first.jobId), (j) => j.status !== 'active');
    expect(opened).toMatchObject({ status: 'completed', prLink: expect.any(String) });

    const second = await (await api('POST', `${base}/${automation.id}/trigger`)).json();
    expect(second).toMatchObject({ status: 'started', jobId: first.jobId, turn: 2 });
    const updated = await until('the second run', readJob(first.jobId), (j) => j.turn === 2 && j.status !== 'active');
    expect(updated).toMatchObject({ status: 'completed', prLink: opened.prLink });
    expect(github.pulls.filter((p) => p.head === `docent/${first.jobId}`)).toHaveLength(1);
    expect((await git.git('acme', 'widgets', 'rev-list', `main..docent/${first.jobId}`)).trim().split('\n')).toHaveLength(2);
    expect(await git.git('acme', 'widgets', 'show', `docent/${first.jobId}:NOTES.md`)).toBe(`note ${notes}\n`);
    expect(await jobIds(`automationId=${automation.id}`)).toEqual([first.jobId]);
  });

  it('the same event twice is one run and one job', async () => {
    const automation = await (await api('POST', base, { ...manual, name: 'once', instruction: 'say nothing' })).json();
    const store = new AutomationStore(gw.deps.mongo.db);
    const runner = new AutomationRunner({ store, tenancy: gw.deps.tenancy, starter: gw.deps.agentJobs.starter, log: gw.deps.log, caps: gw.deps.config.automations });
    const doc = (await store.get('widgets', automation.id))!;
    const [a, b] = await Promise.all([
      runner.run(doc, { origin: 'schedule', eventKey: 'schedule:2026-11-26T03:00:00Z' }),
      runner.run(doc, { origin: 'schedule', eventKey: 'schedule:2026-11-26T03:00:00Z' }),
    ]);
    const again = await runner.run(doc, { origin: 'schedule', eventKey: 'schedule:2026-11-26T03:00:00Z' });
    expect(new Set([a._id, b._id, again._id]).size).toBe(1);
    expect(await runsOf(automation.id)).toHaveLength(1);
    expect(await jobIds(`automationId=${automation.id}`)).toHaveLength(1);
  });
});
