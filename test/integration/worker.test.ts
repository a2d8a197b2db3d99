import { Client, Connection } from '@temporalio/client';
import { AGENT_TASK_QUEUE, DOCS_TASK_QUEUE, PROJECT_SEARCH_ATTRIBUTE, taskQueueName } from '../../workflows/task-queues';
import type { WorkerSelfCheckResult } from '../../workflows/worker-self-check-contract';
import { runWorkerSelfCheck } from '../../src/cli/self-check';
import { createLogger } from '../../src/log';
import { buildWorkers, installTemporalRuntime, type WorkerSet } from '../../src/worker-build';
import { testConfig } from '../support/config';

const config = testConfig();
let set: WorkerSet;
let running: Promise<void>;
let connection: Connection;

beforeAll(async () => {
  installTemporalRuntime(config, createLogger('silent', 'test-worker'));
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
});
