import { randomBytes } from 'node:crypto';
import { installTestRuntime } from '../support/temporal-runtime';
import { buildWorkers, type WorkerSet } from '../../src/worker-build';
import type { JobDoc } from '../../src/jobs/job';
import { webhookDeliveryWorkflowId } from '../../workflows/webhook-delivery-contract';
import { startGateway, type RunningGateway } from '../support/gateway';
import { callApi, type JsonResponse } from '../support/http';
import { activeJobDoc } from '../support/job-docs';
import { readEventStream } from '../support/sse';
import { startTemporalDevServer, type TemporalDevServer } from '../support/temporal-server';
import { createWidgetsProject } from '../support/projects';

// Issue 25: a turn the gateway ends itself starts its webhooks in the background. With Temporal down a retry cannot
// be delivered: it still answers 503 at once, its attempt ends in the job, its turn and its events, and the webhook
// that says so goes out once Temporal is back. A Temporal dev server of the test's own, killed and restarted mid-test;
// the gateway and MongoDB are real.

let temporal: TemporalDevServer;
let gw: RunningGateway;
let key: string;
let workers: WorkerSet;
let running: Promise<void>;

beforeAll(async () => {
  temporal = await startTemporalDevServer();
  gw = await startGateway({
    DOCENT_TEMPORAL_ADDRESS: temporal.address,
    DOCENT_SECRET_KEY: randomBytes(32).toString('base64'),
    DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
    DOCENT_TEMPORAL_START_TIMEOUT_MS: '2000',
  });
  key = await createWidgetsProject(gw);
  // The worker that runs the reconciler's stop of a turn no workflow runs (workflows/reconcile-jobs.ts).
  installTestRuntime(gw.deps.config);
  workers = await buildWorkers(gw.deps.config, { identity: 'temporal-down-worker' });
  running = workers.run();
}, 60_000);

afterAll(async () => {
  workers?.shutdown();
  await running?.catch(() => undefined);
  await workers?.close();
  await gw?.stop();
  await temporal?.close();
});

const api = (method: string, p: string, body?: unknown): Promise<JsonResponse> => callApi(gw.url, key, method, p, body);

it('a retry refused while Temporal is down answers 503 and ends its attempt; its webhook starts once Temporal is back', async () => {
  expect((await api('POST', '/v2/agent/widgets/webhooks', { url: 'http://127.0.0.1:9/hooks/docent', events: ['agent_job.failed'] })).status).toBe(201);
  const jobId = `job_down_${randomBytes(6).toString('hex')}`;
  await gw.deps.mongo.db.collection<JobDoc>('jobs').insertOne(activeJobDoc(jobId, { firstTurnImplied: true }));
  expect((await api('POST', `/v2/agent/widgets/job/${jobId}/stop`)).status).toBe(202);
  // The reconciler ends the stopped turn before Temporal goes away.
  for (let tries = 0; tries < 600 && (await (await api('GET', `/v2/agent/widgets/job/${jobId}`)).json()).status === 'active'; tries++) await new Promise((r) => setTimeout(r, 100));

  await temporal.stop('SIGKILL');
  const retry = await api('POST', `/v2/agent/widgets/job/${jobId}/retry`);

  expect(retry.status).toBe(503);
  expect(await retry.json()).toMatchObject({ code: 'unavailable' });
  const job = await (await api('GET', `/v2/agent/widgets/job/${jobId}`)).json();
  expect(job).toMatchObject({ status: 'failed', error: { code: 'unavailable' }, turns: [{ status: 'failed' }] });
  const { events } = await readEventStream(`${gw.url}/v2/agent/widgets/job/${jobId}/events`, key);
  expect(events.slice(-2).map((e) => [e.type, e.data.status])).toEqual([
    ['turn.finished', 'failed'],
    ['status', 'failed'],
  ]);

  await temporal.start();
  // The second attempt's agent_job.failed message, started by the gateway's background retries.
  const delivery = gw.deps.temporal.workflow.getHandle(webhookDeliveryWorkflowId(`msg_${jobId}_1_2_failed`));
  const deadline = Date.now() + 60_000;
  let started = false;
  while (!started && Date.now() < deadline) {
    started = await delivery.describe().then(
      () => true,
      () => false,
    );
    if (!started) await new Promise((r) => setTimeout(r, 200));
  }
  expect(started).toBe(true);
});
