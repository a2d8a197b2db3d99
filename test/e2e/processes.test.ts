import { Code, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { Client, Connection } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { runWorkerSelfCheck } from '../../src/cli/self-check';
import { AgentService } from '../../src/gen/agent/v2/agent_pb';
import { testConfig } from '../support/config';
import { poll } from '../support/poll';
import { startProcess, type Started, isWorkerPolling } from '../support/process';
import { reconcileScheduleId } from '../../workflows/reconcile-jobs-contract';

// The gateway and the worker as `npm start` runs them: compiled, in their own processes, configured by environment.
const config = testConfig();
const env = {
  DOCENT_HTTP_PORT: '0',
  DOCENT_GRPC_PORT: '0',
  DOCENT_MONGO_DB: config.mongo.db,
  DOCENT_TASK_QUEUE_PREFIX: config.temporal.taskQueuePrefix,
  DOCENT_LOG_LEVEL: 'info',
};
let gateway: Started;
let worker: Started;
let httpUrl: string;
let grpcUrl: string;

beforeAll(async () => {
  gateway = startProcess('src/main.js', env);
  worker = startProcess('src/worker.js', env);
  const listening = await gateway.waitForLog((l) => typeof l.httpPort === 'number');
  httpUrl = `http://127.0.0.1:${listening.httpPort}`;
  grpcUrl = `http://127.0.0.1:${listening.grpcPort}`;
  await worker.waitForLog(isWorkerPolling);
});
/** The reconciler's schedule, which the worker process creates at start. */
async function withSchedule<T>(use: (handle: ReturnType<Client['schedule']['getHandle']>) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address: config.temporal.address });
  try {
    return await use(new Client({ connection, namespace: config.temporal.namespace }).schedule.getHandle(reconcileScheduleId(config.temporal.taskQueuePrefix)));
  } finally {
    await connection.close();
  }
}

afterAll(async () => {
  await Promise.all([gateway?.stop('SIGKILL'), worker?.stop('SIGKILL')]);
  await withSchedule((h) => h.delete()).catch(() => undefined);
  const mongo = new MongoClient(config.mongo.url);
  await mongo.db(config.mongo.db).dropDatabase();
  await mongo.close();
});

describe('gateway and worker processes', () => {
  it('report ready, with every dependency healthy', async () => {
    // Readiness is asked again as an orchestrator would: under a loaded machine a dependency's check may time out once.
    const ready = await poll(
      '/readyz',
      async () => {
        const r = await fetch(`${httpUrl}/readyz`);
        return { status: r.status, body: await r.json() };
      },
      (a) => a.status === 200,
      30_000,
    );
    expect(ready.body).toMatchObject({
      ready: true,
      dependencies: { mongodb: { ok: true }, elasticsearch: { ok: true }, temporal: { ok: true } },
    });
  });

  it('serve gRPC on the h2c port', async () => {
    const client = createClient(AgentService, createGrpcTransport({ baseUrl: grpcUrl }));
    await expect(client.getAgentJob({ projectId: 'p', jobId: 'j' })).rejects.toMatchObject({ code: Code.Unauthenticated });
  });

  it('run a workflow through the worker process', async () => {
    const r = await runWorkerSelfCheck(config);
    expect(r.workerIdentity).toContain(`:${worker.child.pid}`);
    expect(r.mongodb.ok && r.elasticsearch.ok).toBe(true);
  });

  it('the worker creates the job reconciler schedule for its queues', async () => {
    const schedule = await withSchedule((h) => h.describe());
    expect(schedule.action).toMatchObject({ type: 'startWorkflow', workflowType: 'reconcileJobs' });
  });

  it('stop cleanly on SIGTERM', async () => {
    const [g, w] = await Promise.all([gateway.stop('SIGTERM'), worker.stop('SIGTERM')]);
    expect(g).toBe(0);
    expect(w).toBe(0);
    await expect(fetch(`${httpUrl}/healthz`)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
  });
});
