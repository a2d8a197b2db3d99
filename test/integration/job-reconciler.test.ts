import type { JobDoc } from '../../src/jobs/job';
import { installTestRuntime } from '../support/temporal-runtime';
import { ensureReconcileSchedule } from '../../src/agent/reconcile-schedule';
import { buildWorkers, type WorkerSet } from '../../src/worker-build';
import { reconcileScheduleId, type ReconcileJobsResult } from '../../workflows/reconcile-jobs-contract';
import { AGENT_TASK_QUEUE, taskQueueName } from '../../workflows/task-queues';
import { startGateway, type RunningGateway } from '../support/gateway';
import { activeJobDoc } from '../support/job-docs';
import { callApi } from '../support/http';
import { createWidgetsProject } from '../support/projects';

// Issue 12 part 3: active jobs that no workflow is running are found and ended by the reconciler, a Temporal workflow
// the worker's schedule runs. Real gateway, worker, Temporal and database; the test runs the workflow itself.

let gw: RunningGateway;
let set: WorkerSet;
let running: Promise<void>;
let key: string;
const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000);

const activeJob = (id: string, updatedAt: Date): JobDoc => activeJobDoc(id, { at: updatedAt });

beforeAll(async () => {
  gw = await startGateway();
  key = await createWidgetsProject(gw);
  installTestRuntime(gw.deps.config);
  set = await buildWorkers(gw.deps.config, { identity: 'reconciler-under-test' });
  running = set.run();
});

afterAll(async () => {
  await gw.deps.temporal.schedule
    .getHandle(reconcileScheduleId(gw.deps.config.temporal.taskQueuePrefix))
    .delete()
    .catch(() => undefined);
  set?.shutdown();
  await running;
  await set?.close();
  await gw?.stop();
});

it('fails an active job left without a workflow, with an error that says to retry, and leaves a job still starting alone', async () => {
  // A gateway killed between the insert and the start, ten minutes ago; and a create in flight right now.
  const jobs = gw.deps.mongo.db.collection<JobDoc>('jobs');
  await jobs.insertMany([activeJob('job_orphan', minutesAgo(10)), activeJob('job_starting', new Date())]);

  const result: ReconcileJobsResult = await gw.deps.temporal.workflow.execute('reconcileJobs', {
    workflowId: `reconcile-test-${Date.now()}`,
    taskQueue: taskQueueName(gw.deps.config.temporal.taskQueuePrefix, AGENT_TASK_QUEUE),
    args: [{ olderThanMs: 60_000 }],
  });
  expect(result.failed).toEqual(['job_orphan']);

  const orphan = await (await callApi(gw.url, key, 'GET', '/v2/agent/widgets/job/job_orphan')).json();
  expect(orphan.status).toBe('failed');
  expect(orphan.error).toEqual({ code: 'unavailable', message: expect.stringContaining('retry it') });
  expect(orphan.turns.map((t: { turn: number; status: string; prompt: string }) => [t.turn, t.status, t.prompt])).toEqual([[1, 'failed', 'fix the typo']]);
  expect(await (await callApi(gw.url, key, 'GET', '/v2/agent/widgets/job/job_starting')).json()).toMatchObject({ status: 'active' });
});

it('the worker creates the reconciler schedule once, however many workers start', async () => {
  const prefix = gw.deps.config.temporal.taskQueuePrefix;
  await ensureReconcileSchedule(gw.deps.temporal, prefix);
  await ensureReconcileSchedule(gw.deps.temporal, prefix);
  const schedule = await gw.deps.temporal.schedule.getHandle(reconcileScheduleId(prefix)).describe();
  expect(schedule.action).toMatchObject({ type: 'startWorkflow', workflowType: 'reconcileJobs', taskQueue: taskQueueName(prefix, AGENT_TASK_QUEUE) });
});
