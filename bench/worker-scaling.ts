// worker-scaling: agent jobs completed per minute, N submitted at once through one gateway, with two worker processes
// vs one. Workers are `node dist/src/worker.js` with a workspace folder each, as a scale-out runs them; the scripted
// model answers every call after a fixed delay, as a provider would.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { agentJobWorkflowId } from '../workflows/agent-job-contract';
import { PROJECT_SEARCH_ATTRIBUTE } from '../workflows/task-queues';
import { startGateway } from '../test/support/gateway';
import { backedBy, startGitHubDouble } from '../test/support/github-double';
import { startGitServer } from '../test/support/git-server';
import { isWorkerPolling, startProcess, type Started } from '../test/support/process';
import type { Benchmark } from './lib/bench';
import { benchEnv, runId, terminateWorkflows } from './lib/stack';
import { fmtRatio, median, medianRatio } from './lib/stats';

const token = 'ghs_benchtoken0123456789';
const jobsPerBlock = 16;
const rounds = 4;
/** Per model call; an agent job here makes two (one tool call, then the title and summary). */
const modelLatencyMs = 400;
// Linux reports process CPU time in clock ticks of 1/100 s (USER_HZ) on every architecture Node runs on.
const ticksPerSecond = 100;

interface WorkerProcess {
  name: string;
  started: Started;
  workspaceDir: string;
}

/** CPU seconds of a process and of the children it has reaped (git, the sandbox), from /proc/<pid>/stat. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime are fields 14–17 of the line, 12–15 after the command name and state.
  return fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0) / ticksPerSecond;
}

/** Busy and total CPU time of the whole host so far, in seconds summed over its cores. */
function hostCpu(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const { times } of os.cpus()) {
    const all = times.user + times.nice + times.sys + times.irq + times.idle;
    total += all / 1000;
    busy += (all - times.idle) / 1000;
  }
  return { busy, total };
}

/** The local stack's Temporal and FerretDB processes, found by command line. */
async function stackProcesses(): Promise<Array<{ label: string; pid: number }>> {
  const found: Array<{ label: string; pid: number }> = [];
  for (const pid of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue;
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (argv.some((a) => a.endsWith('temporal')) && argv.includes('start-dev')) found.push({ label: 'Temporal', pid: Number(pid) });
    else if (argv[0]?.endsWith('/ferretdb')) found.push({ label: 'FerretDB', pid: Number(pid) });
  }
  return found;
}

interface BlockFigures {
  jobsPerMinute: number;
  /** Submission to workflow result, per job. */
  p50JobSeconds: number;
  /** Cores' worth of CPU used during the block: `host` (every process) and each process we know, with its children. */
  cores: Record<string, number>;
  /** Jobs whose agent step (runAgent) ran on each worker. */
  jobsByWorker: number[];
  /** Activity attempts after the first, over the block's jobs. */
  retries: number;
  /** Where the block's last job to finish spent its time. */
  lastJob: string;
}

const eventMs = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

export const workerScaling: Benchmark = {
  name: 'worker-scaling',
  summary: `agent jobs/min, ${jobsPerBlock} at once, model ${modelLatencyMs} ms per call: two worker processes vs one`,
  async run(ctx) {
    const model = await ctx.model();
    const run = runId();
    const projectId = `bench-${run}`;
    const git = await startGitServer(token);
    const github = await startGitHubDouble({ token, ...backedBy(git) });
    await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n\nHello world\n', 'src/index.js': 'module.exports = 42;\n' });
    const gw = await startGateway(benchEnv(run, { ...model.env, DOCENT_GITHUB_GIT_URL: git.url, DOCENT_GITHUB_API_URL: github.apiUrl, DOCENT_GITHUB_TOKEN: token }));
    const { config } = gw.deps;
    const workerEnv = {
      DOCENT_MONGO_DB: config.mongo.db,
      DOCENT_TASK_QUEUE_PREFIX: config.temporal.taskQueuePrefix,
      DOCENT_ES_INDEX_PREFIX: config.elasticsearch.indexPrefix,
      ...model.env,
      DOCENT_GITHUB_API_URL: github.apiUrl,
      DOCENT_GITHUB_GIT_URL: git.url,
      DOCENT_GITHUB_TOKEN: token,
      DOCENT_GITHUB_SHARED_ORGS: '*',
      // This run's queue prefix is thrown away afterwards; a reconciler schedule would outlive it.
      DOCENT_RECONCILER: 'off',
      // 'worker polling' is an info line.
      DOCENT_LOG_LEVEL: 'info',
    };
    const workers: WorkerProcess[] = [];
    const startWorker = async (name: string): Promise<WorkerProcess> => {
      const workspaceDir = await mkdtemp(path.join(os.tmpdir(), `docent-bench-ws-${name}-`));
      let started: Started;
      try {
        started = startProcess('src/worker.js', { ...workerEnv, DOCENT_WORKSPACE_DIR: workspaceDir });
      } catch (err) {
        await rm(workspaceDir, { recursive: true, force: true });
        throw err;
      }
      const w = { name, started, workspaceDir };
      workers.push(w);
      const t = performance.now();
      await started.waitForLog(isWorkerPolling, 120_000);
      ctx.log(`worker ${name} (pid ${started.child.pid}) polling after ${((performance.now() - t) / 1000).toFixed(1)} s`);
      return w;
    };
    const stopWorker = async (w: WorkerProcess) => {
      await w.started.stop('SIGTERM');
      workers.splice(workers.indexOf(w), 1);
      await rm(w.workspaceDir, { recursive: true, force: true });
    };

    try {
      await gw.deps.tenancy.createOrg(`org-${run}`);
      await gw.deps.tenancy.createProject({ _id: projectId, orgId: `org-${run}`, repository: 'acme/widgets', ref: 'main' });
      const adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: `org-${run}`, projectId })).key;
      const principal = await gw.deps.keys.authenticate(`Bearer ${adminKey}`, 'admin');
      const body = JSON.stringify({ prompt: `add a note [latency=${modelLatencyMs}]` });

      /** REST create, then wait for the workflow's result and check the job completed with a pull request. */
      const agentJob = async (): Promise<{ id: string; createMs: number }> => {
        const t = performance.now();
        const r = await fetch(`${gw.url}/v2/agent/${projectId}/job`, { method: 'POST', headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, body });
        const job = (await r.json()) as { id: string };
        if (r.status !== 201) throw new Error(`create answered ${r.status}: ${JSON.stringify(job)}`);
        const createMs = performance.now() - t;
        await gw.deps.temporal.workflow.getHandle(agentJobWorkflowId(job.id)).result();
        const done = await gw.deps.agentJobs.getJob(principal, { projectId, jobId: job.id });
        if (done.status !== 'completed' || !done.prLink) throw new Error(`job ended ${done.status} ${JSON.stringify(done.error ?? {})}`);
        return { id: job.id, createMs };
      };

      /**
       * From the workflow history: the worker process whose identity (`…:<pid>`) ran the job's agent step, how many
       * activity attempts were retries, and each activity's time from scheduled to completed (queueing included).
       */
      const jobHistory = async (jobId: string) => {
        const events = (await gw.deps.temporal.workflow.getHandle(agentJobWorkflowId(jobId)).fetchHistory()).events ?? [];
        const scheduled = new Map<string, { name: string; at: number }>();
        const steps: string[] = [];
        let agentIdentity = '';
        let retries = 0;
        for (const e of events) {
          const s = e.activityTaskScheduledEventAttributes;
          if (s) scheduled.set(String(e.eventId), { name: s.activityType?.name ?? '?', at: eventMs(e.eventTime) });
          const started = e.activityTaskStartedEventAttributes;
          if (started) {
            if ((started.attempt ?? 1) > 1) retries++;
            if (scheduled.get(String(started.scheduledEventId))?.name === 'runAgent') agentIdentity = started.identity ?? '';
          }
          const done = e.activityTaskCompletedEventAttributes;
          const of = done && scheduled.get(String(done.scheduledEventId));
          if (of) steps.push(`${of.name} ${(eventMs(e.eventTime) - of.at).toFixed(0)} ms`);
        }
        return { worker: workers.find((w) => agentIdentity.endsWith(`:${w.started.child.pid}`))?.name, retries, steps };
      };

      const stack = await stackProcesses();
      const block = async (): Promise<BlockFigures> => {
        const measured = [
          ...workers.map((w) => ({ label: `worker ${w.name}`, pids: [w.started.child.pid!] })),
          // The git server double runs git in a process of its own (test/support/git-process.js).
          { label: 'gateway + git server', pids: [process.pid, git.pid] },
          ...stack.map((s) => ({ label: s.label, pids: [s.pid] })),
        ];
        const cpuOf = async (pids: number[]) => (await Promise.all(pids.map((pid) => cpuSeconds(pid)))).reduce((a, b) => a + b, 0);
        const cpu = () => Promise.all(measured.map((m) => cpuOf(m.pids).catch(() => NaN)));
        const [cpu0, host0] = [await cpu(), hostCpu()];
        const t0 = performance.now();
        const jobs = await Promise.all(Array.from({ length: jobsPerBlock }, () => agentJob().then((j) => ({ ...j, seconds: (performance.now() - t0) / 1000 }))));
        const wall = (performance.now() - t0) / 1000;
        const [cpu1, host1] = [await cpu(), hostCpu()];
        const histories = await Promise.all(jobs.map((j) => jobHistory(j.id)));
        const last = jobs.reduce((a, b) => (b.seconds > a.seconds ? b : a));
        const lastSteps = histories[jobs.indexOf(last)]!.steps;
        const cores: Record<string, number> = { host: ((host1.busy - host0.busy) / (host1.total - host0.total)) * os.cpus().length };
        for (const [i, m] of measured.entries()) cores[m.label] = (cpu1[i]! - cpu0[i]!) / wall;
        return {
          jobsPerMinute: (jobsPerBlock / wall) * 60,
          p50JobSeconds: median(jobs.map((j) => j.seconds)),
          cores,
          jobsByWorker: workers.map((w) => histories.filter((h) => h.worker === w.name).length),
          retries: histories.reduce((n, h) => n + h.retries, 0),
          lastJob: `${last.seconds.toFixed(1)} s: create ${last.createMs.toFixed(0)} ms, ${lastSteps.join(', ')}`,
        };
      };

      // Worker A runs throughout; B is started before each two-worker block (outside the timing) and stopped after it.
      await startWorker('A');
      const oneWorker = () => block();
      const twoWorkers = async () => {
        const b = await startWorker('B');
        try {
          return await block();
        } finally {
          await stopWorker(b);
        }
      };
      const coreList = (cores: Record<string, number>) =>
        Object.entries(cores)
          .map(([label, c]) => `${label} ${c.toFixed(2)}`)
          .join(', ');
      const show = (label: string, f: BlockFigures) =>
        ctx.log(
          `${label}: ${f.jobsPerMinute.toFixed(1)} jobs/min, p50 job ${f.p50JobSeconds.toFixed(1)} s, CPU cores: ${coreList(f.cores)}; agent steps per worker ${f.jobsByWorker.join('/')}; ${f.retries} retried activities; last job ${f.lastJob}`,
        );
      show('warm-up, 1 worker', await oneWorker());
      show('warm-up, 2 workers', await twoWorkers());
      const one: BlockFigures[] = [];
      const two: BlockFigures[] = [];
      for (let i = 0; i < rounds; i++) {
        one.push(await oneWorker());
        show(`round ${i + 1}, 1 worker`, one.at(-1)!);
        two.push(await twoWorkers());
        show(`round ${i + 1}, 2 workers`, two.at(-1)!);
      }

      const rates = (bs: BlockFigures[]) => bs.map((b) => b.jobsPerMinute);
      const ratio = medianRatio(rates(two), rates(one));
      const medianCores = (bs: BlockFigures[]) => Object.fromEntries(Object.keys(bs[0]!.cores).map((k) => [k, median(bs.map((b) => b.cores[k]!))]));
      const describe = (bs: BlockFigures[]) =>
        `${median(rates(bs)).toFixed(1)} jobs/min (blocks ${rates(bs)
          .map((r) => r.toFixed(1))
          .join(', ')}); p50 job ${median(bs.map((b) => b.p50JobSeconds)).toFixed(1)} s; CPU cores (median): ${coreList(medianCores(bs))}`;
      const split = two.map((b) => b.jobsByWorker.join('/')).join(', ');
      return {
        rows: [
          {
            bench: 'worker-scaling',
            case: `${jobsPerBlock} agent jobs at once, 2 worker processes vs 1`,
            ratio: `${fmtRatio(ratio)} jobs/min`,
            target: 'reported (one 2-core host: a second worker adds no CPU)',
            met: null,
            subject: `${describe(two)}; agent steps on A/B ${split}`,
            baseline: describe(one),
          },
        ],
        notes: [
          `${rounds} pairs of blocks (one worker, then two) after a warm-up pair; each block submits ${jobsPerBlock} jobs through the gateway's REST create at once and ends when the last ` +
            `workflow has returned and its job reads completed with a pull request (local git over HTTP, GitHub double). The model answers each of a job's two calls after ${modelLatencyMs} ms. ` +
            `Workers are \`node dist/src/worker.js\` processes with a workspace folder each and Temporal's default slots (100 activities, 40 workflow tasks per worker), ` +
            `so one worker is never short of slots at ${jobsPerBlock} jobs. Worker A runs throughout; B starts before each two-worker block, cold. ` +
            `CPU is in cores' worth over the block (the host's ${os.cpus().length} cores at most): \`host\` counts every process, other agents' work on the machine included; ` +
            'each named process counts with the children it reaped (a worker: its git and sandbox processes; this process: the gateway, the git server with its `git http-backend`, the GitHub double). ' +
            'The scripted model runs in a process of its own, not counted (it only waits). Both workers, the gateway, the git server and the stack share those cores.',
        ],
      };
    } finally {
      for (const w of [...workers]) await stopWorker(w).catch(() => undefined);
      await terminateWorkflows(gw.deps.temporal, `${PROJECT_SEARCH_ATTRIBUTE} = "${projectId}"`, config.temporal.namespace).catch(() => undefined);
      await gw.stop();
      await Promise.allSettled([git.close(), github.close()]);
    }
  },
};
