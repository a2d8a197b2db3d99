// workflow-overhead: one agent job end to end (REST create → workflow result) with instant activities (scripted model,
// local git over HTTP, GitHub double) vs a no-op workflow with as many no-op activities, on the same worker.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createEsClient } from '../src/search/es-client';
import { bundleWorkflowCode, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { workspaceQueueName } from '../activities/agent-job/workspace-queue';
import { createLogger } from '../src/log';
import { createMongo } from '../src/store/mongo';
import { installTemporalRuntime } from '../src/worker-build';
import { agentJobWorkflowId } from '../workflows/agent-job-contract';
import { AGENT_TASK_QUEUE, taskQueueName } from '../workflows/task-queues';
import { startGateway } from '../test/support/gateway';
import { startGitHubDouble } from '../test/support/github-double';
import { startGitServer } from '../test/support/git-server';
import type { Benchmark } from './lib/bench';
import { alternate, closedLoop, p50s, pooled } from './lib/blocks';
import { benchEnv, runId } from './lib/stack';
import { fmtMs, fmtRatio, median, medianRatio } from './lib/stats';

const token = 'ghs_benchtoken0123456789';
const rounds = 4;
const perBlock = 2;

const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

/**
 * Server-side time the workflow spent outside its activities' own execution (start to close minus time running
 * activities), and the part of it its activities waited to be picked up on a queue other than the workflow's (the
 * clone's worker queue: an activity on the workflow's own queue is handed out in the workflow task's reply).
 */
async function orchestrationMs(handle: { fetchHistory(): Promise<{ events?: Array<Record<string, any> & { eventTime?: any }> | null }> }): Promise<{ total: number; routed: number }> {
  const events = (await handle.fetchHistory()).events ?? [];
  const ownQueue = events[0]?.workflowExecutionStartedEventAttributes?.taskQueue?.name;
  const scheduled = new Map<string, { at: number; queue?: string }>();
  const started = new Map<string, number>();
  let inside = 0;
  let routed = 0;
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(String(e.eventId), { at: ms(e.eventTime), queue: s.taskQueue?.name });
    const st = e.activityTaskStartedEventAttributes;
    if (st) {
      started.set(String(st.scheduledEventId), ms(e.eventTime));
      const sch = scheduled.get(String(st.scheduledEventId));
      if (sch && sch.queue !== ownQueue) routed += ms(e.eventTime) - sch.at;
    }
    const done = e.activityTaskCompletedEventAttributes;
    if (done) inside += ms(e.eventTime) - (started.get(String(done.scheduledEventId)) ?? ms(e.eventTime));
  }
  return { total: ms(events.at(-1)?.eventTime) - ms(events[0]?.eventTime) - inside, routed };
}

export const workflowOverhead: Benchmark = {
  name: 'workflow-overhead',
  summary: 'one agent job end to end with instant activities vs a no-op workflow with as many no-op activities',
  async run(ctx) {
    const model = await ctx.model();
    const run = runId();
    const git = await startGitServer(token);
    const github = await startGitHubDouble({
      token,
      repoExists: async (owner, repo) =>
        git.git(owner, repo, 'rev-parse', '--git-dir').then(
          () => true,
          () => false,
        ),
      branchHead: async (owner, repo, branch) =>
        git.git(owner, repo, 'rev-parse', '--verify', `refs/heads/${branch}`).then(
          (s) => s.trim(),
          () => null,
        ),
    });
    await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n\nHello world\n', 'src/index.js': 'module.exports = 42;\n' });
    const workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-bench-ws-'));
    const gw = await startGateway(
      benchEnv(run, {
        ...model.env,
        DOCENT_MODEL_API_KEY: model.apiKey,
        DOCENT_GITHUB_GIT_URL: git.url,
        DOCENT_GITHUB_API_URL: github.apiUrl,
        DOCENT_GITHUB_TOKEN: token,
        DOCENT_WORKSPACE_DIR: workspaceDir,
      }),
    );
    const { config } = gw.deps;
    try {
      installTemporalRuntime(config, createLogger('silent', 'bench-worker'));
    } catch {
      // installed already in this process
    }
    const connection = await NativeConnection.connect({ address: config.temporal.address });
    const mongo = createMongo(config.mongo.url, config.mongo.db, config.dependencyTimeoutMs);
    const es = createEsClient(config.elasticsearch);
    const taskQueue = taskQueueName(config.temporal.taskQueuePrefix, AGENT_TASK_QUEUE);
    const t = performance.now();
    const activities = { ...createActivities({ config, db: mongo.db, es, workerIdentity: 'bench-worker' }), benchNoop: async () => undefined };
    const worker = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue,
      workflowBundle: await bundleWorkflowCode({ workflowsPath: require.resolve('./lib/overhead-workflows'), logger: Runtime.instance().logger }),
      activities,
      identity: 'bench-worker',
    });
    // A turn's steps after its clone go to the worker's own queue, as in src/worker-build.ts.
    const own = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: workspaceQueueName(config.temporal.taskQueuePrefix, config.agent.workspaceDir),
      activities,
      identity: 'bench-worker',
    });
    const running = Promise.all([worker.run(), own.run()]);
    ctx.log(`worker ready in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    try {
      const projectId = `bench-${run}`;
      await gw.deps.tenancy.createOrg(`org-${run}`);
      await gw.deps.tenancy.createProject({ _id: projectId, orgId: `org-${run}`, repository: 'acme/widgets', ref: 'main' });
      const adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: `org-${run}`, projectId })).key;
      let lastJob = '';
      let blockIds: string[] = [];
      const agentJob = async () => {
        const r = await fetch(`${gw.url}/v2/agent/${projectId}/job`, {
          method: 'POST',
          headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ prompt: 'add a note' }),
        });
        const job = (await r.json()) as { id: string };
        if (r.status !== 201) throw new Error(`create answered ${r.status}`);
        await gw.deps.temporal.workflow.getHandle(agentJobWorkflowId(job.id)).result();
        const done = await gw.deps.agentJobs.getJob(await gw.deps.keys.authenticate(`Bearer ${adminKey}`, 'admin'), { projectId, jobId: job.id });
        if (done.status !== 'completed' || !done.prLink) throw new Error(`job ended ${done.status} ${JSON.stringify(done.error ?? {})}`);
        lastJob = job.id;
        blockIds.push(agentJobWorkflowId(job.id));
      };

      // The warm-up job also tells how many activities an agent job runs, and how long each took.
      await agentJob();
      const history = await gw.deps.temporal.workflow.getHandle(agentJobWorkflowId(lastJob)).fetchHistory();
      const scheduled = new Map<string, { name: string; at: number }>();
      const steps: string[] = [];
      for (const e of history.events ?? []) {
        if (e.activityTaskScheduledEventAttributes) scheduled.set(String(e.eventId), { name: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', at: ms(e.eventTime) });
        const done = e.activityTaskCompletedEventAttributes;
        if (done) {
          const s = scheduled.get(String(done.scheduledEventId));
          if (s) steps.push(`${s.name} ${(ms(e.eventTime) - s.at).toFixed(0)} ms`);
        }
      }
      const activityCount = scheduled.size;
      const workflowMs = ms(history.events?.at(-1)?.eventTime) - ms(history.events?.[0]?.eventTime);
      ctx.log(`an agent job runs ${activityCount} activities: ${steps.join(', ')} (workflow ${workflowMs.toFixed(0)} ms)`);

      const noop = async () => {
        const workflowId = `bench-noop-${randomBytes(6).toString('hex')}`;
        await gw.deps.temporal.workflow.execute('noopJob', { taskQueue, workflowId, args: [activityCount] });
        blockIds.push(workflowId);
      };
      // Each block also reads its workflows' histories afterwards (untimed) for the orchestration-only figure.
      const orchestration: { subject: number[]; baseline: number[] } = { subject: [], baseline: [] };
      const routed: number[] = [];
      const block = (side: 'subject' | 'baseline', op: () => Promise<void>) => async () => {
        blockIds = [];
        const b = await closedLoop(op, { concurrency: 1, ops: perBlock });
        const figures = await Promise.all(blockIds.map((id) => orchestrationMs(gw.deps.temporal.workflow.getHandle(id))));
        orchestration[side].push(median(figures.map((f) => f.total)));
        if (side === 'subject') routed.push(median(figures.map((f) => f.routed)));
        return b;
      };
      const r = await alternate({ rounds, baseline: block('baseline', noop), subject: block('subject', agentJob) });
      // Drop the warm-up pair's figures.
      orchestration.subject.shift();
      orchestration.baseline.shift();
      routed.shift();
      const ratio = medianRatio(p50s(r.subject), p50s(r.baseline));
      const orchRatio = medianRatio(orchestration.subject, orchestration.baseline);
      return {
        rows: [
          {
            bench: 'workflow-overhead',
            case: `one agent job, ${activityCount} activities`,
            ratio: `p50 ${fmtRatio(ratio)}`,
            target: '≤ 1.1×',
            met: ratio <= 1.1,
            subject: `p50 ${fmtMs(median(p50s(r.subject)))}, max ${fmtMs(pooled(r.subject, 100))}`,
            baseline: `p50 ${fmtMs(median(p50s(r.baseline)))}, max ${fmtMs(pooled(r.baseline, 100))}`,
            note: "wall time from the REST create to the workflow result, including the activities' real work (git clone and push over HTTP, two model calls, the GitHub double).",
          },
          {
            bench: 'workflow-overhead',
            case: 'same jobs, orchestration only (history: start→close minus time inside activities)',
            ratio: `p50 ${fmtRatio(orchRatio)}`,
            target: '≤ 1.1×',
            met: orchRatio <= 1.1,
            subject: `p50 ${fmtMs(median(orchestration.subject))}, of which ${fmtMs(median(routed))} waiting on the clone's worker queue`,
            baseline: `p50 ${fmtMs(median(orchestration.baseline))}`,
            note:
              "the time Temporal and the workflow code spend between activities: scheduling, dispatch, workflow tasks and timers. A turn's steps after the clone go to the clone's worker queue " +
              "(workflows/clone-route.ts) and wait there for a poll, where the no-op's activities, on the workflow's own queue, come back in the workflow task's reply.",
          },
        ],
        notes: [
          `${rounds} pairs of blocks of ${perBlock} sequential jobs after a warm-up pair; subject = REST create until the workflow's result, floor = workflow.execute of the no-op workflow. ` +
            `Activity times of one job (scheduled → completed): ${steps.join(', ')}; the workflow ran ${workflowMs.toFixed(0)} ms.`,
        ],
      };
    } finally {
      worker.shutdown();
      own.shutdown();
      await running.catch(() => undefined);
      await Promise.allSettled([connection.close(), mongo.client.close(), es.close()]);
      await gw.stop();
      await Promise.allSettled([git.close(), github.close()]);
      await rm(workspaceDir, { recursive: true, force: true });
    }
  },
};
