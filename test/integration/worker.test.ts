import { readdirSync, readFileSync } from 'node:fs';
import { installTestRuntime } from '../support/temporal-runtime';
import { Client, Connection } from '@temporalio/client';
import type { State, Worker } from '@temporalio/worker';
import { AGENT_TASK_QUEUE, DOCS_TASK_QUEUE, PROJECT_SEARCH_ATTRIBUTE, taskQueueName } from '../../workflows/task-queues';
import type { WorkerSelfCheckResult } from '../../workflows/worker-self-check-contract';
import { runWorkerSelfCheck } from '../../src/cli/self-check';
import { buildWorkers, type WorkerSet } from '../../src/worker-build';
import { testConfig } from '../support/config';

const config = testConfig();
// Node names each worker_threads thread WorkerThread; the SDK runs workflows in such threads and starts no others.
const workflowThreads = () => readdirSync('/proc/self/task').filter((t) => readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim() === 'WorkerThread').length;
let set: WorkerSet;
let running: Promise<void>;
let connection: Connection;

beforeAll(async () => {
  installTestRuntime(config);
  set = await buildWorkers(config, { identity: 'worker-under-test' });
  running = set.run();
  connection = await Connection.connect({ address: config.temporal.address });
});
afterAll(async () => {
  set.shutdown();
  await running;
  await set.close();
  await connection.close();
});

describe('worker on the real Temporal server', () => {
  it('executes the self-check workflow and reaches MongoDB and Elasticsearch', async () => {
    const result: WorkerSelfCheckResult = await runWorkerSelfCheck(config);
    expect(result).toEqual({
      workerIdentity: 'worker-under-test',
      taskQueue: taskQueueName(config.temporal.taskQueuePrefix, AGENT_TASK_QUEUE),
      mongodb: { ok: true },
      elasticsearch: { ok: true },
    });
  });

  it('polls both task queues named in workflows/task-queues.ts', async () => {
    const client = new Client({ connection, namespace: config.temporal.namespace });
    for (const q of [AGENT_TASK_QUEUE, DOCS_TASK_QUEUE] as const) {
      const r = await client.workflowService.describeTaskQueue({
        namespace: config.temporal.namespace,
        taskQueue: { name: taskQueueName(config.temporal.taskQueuePrefix, q) },
        taskQueueType: 1, // workflow
      });
      expect(r.pollers?.map((p) => p.identity)).toContain('worker-under-test');
    }
  });

  it('runs against a server that has the DocentProjectId search attribute', async () => {
    const r = await connection.operatorService.listSearchAttributes({ namespace: config.temporal.namespace });
    expect(r.customAttributes?.[PROJECT_SEARCH_ATTRIBUTE]).toBe(2); // INDEXED_VALUE_TYPE_KEYWORD
  });

  it('runs the workflows of its three queues on one workflow thread, which outlives the first queue to stop', async () => {
    const own = testConfig();
    const before = workflowThreads();
    const other = await buildWorkers(own, { identity: 'one-thread-worker' });
    const run = other.run();
    try {
      expect(workflowThreads()).toBe(before + 1);
      // workers[0] serves the agent queue (TASK_QUEUES order). The docs and webhook queues' workers stop first (the
      // workspace queue's too); the agent queue's workflows still run on the shared thread.
      const [agent, ...rest] = other.workers;
      for (const w of rest) w.shutdown();
      await Promise.all(rest.map((w) => waitForState(w, 'STOPPED')));
      expect(agent?.getState()).toBe('RUNNING');
      const result = await runWorkerSelfCheck(own);
      expect(result).toMatchObject({ workerIdentity: 'one-thread-worker', mongodb: { ok: true } });
    } finally {
      other.shutdown();
      await run;
      await other.close();
    }
    expect(workflowThreads()).toBe(before);
  });
});

async function waitForState(w: Worker, state: State): Promise<void> {
  while (w.getState() !== state) await new Promise((r) => setTimeout(r, 20));
}
