import { randomBytes } from 'node:crypto';
import { installTestRuntime } from '../support/temporal-runtime';
import type { JobDoc } from '../../src/jobs/job';
import { buildWorkers, type WorkerSet } from '../../src/worker-build';
import { stopOrphanTurnWorkflowId } from '../../workflows/reconcile-jobs-contract';
import { startGateway, type RunningGateway } from '../support/gateway';
import { callApi, type JsonResponse } from '../support/http';
import { activeJobDoc } from '../support/job-docs';
import { readEventStream } from '../support/sse';
import { startReceiver } from '../support/webhook-receiver';
import { createWidgetsProject } from '../support/projects';

// Issue 25: the gateway's own turn ends (a stop with no workflow running, a retry that could not be delivered) go
// through the job ledger like the worker's: the turn ends, then the job, then a `turn.finished` event, then the
// webhooks. Real gateway over sockets, a real worker delivering webhooks, Temporal and the database.

let gw: RunningGateway;
let set: WorkerSet;
let running: Promise<void>;
let key: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  gw = await startGateway({
    DOCENT_SECRET_KEY: randomBytes(32).toString('base64'),
    // The receiver listens on loopback, which only this setting lets docent call.
    DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
    // Temporal cannot take an instruction within 1 ms: every retry's delivery fails, as it does when Temporal is slow or down.
    DOCENT_TEMPORAL_START_TIMEOUT_MS: '1',
  });
  key = await createWidgetsProject(gw);
  installTestRuntime(gw.deps.config);
  set = await buildWorkers(gw.deps.config, { identity: 'ledger-under-test' });
  running = set.run();
  receiver = await startReceiver(() => 204);
  const endpoint = await (await api('POST', '/v2/agent/widgets/webhooks', { url: receiver.url, events: ['agent_job.turn_finished', 'agent_job.failed'] })).json();
  receiver.setSecret(endpoint.secret);
});

afterAll(async () => {
  set?.shutdown();
  await running;
  await set?.close();
  await receiver?.close();
  await gw?.stop();
});

const api = (method: string, p: string, body?: unknown): Promise<JsonResponse> => callApi(gw.url, key, method, p, body);

/** A job as a create leaves it (first turn implied), whose workflow is gone: never started, or ended by hand. */
async function jobWithoutWorkflow(): Promise<string> {
  const id = `job_ledger_${randomBytes(6).toString('hex')}`;
  await gw.deps.mongo.db.collection<JobDoc>('jobs').insertOne(activeJobDoc(id, { firstTurnImplied: true }));
  return id;
}

/** The first delivery of a message of `type` about the job that `where` accepts, once it has arrived. */
async function delivery(jobId: string, type: string, where: (job: any) => boolean = () => true) {
  const find = () => receiver.received.find((r) => r.body.type === type && r.body.data.job.id === jobId && where(r.body.data.job));
  const deadline = Date.now() + 60_000;
  while (!find() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return find();
}

/** The job once it is no longer active (a stop handed to the reconciler ends it shortly after the 202). */
async function settled(jobId: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const job = await (await api('GET', `/v2/agent/widgets/job/${jobId}`)).json();
    if (job.status !== 'active' || Date.now() > deadline) return job;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const eventsOf = async (jobId: string) => (await readEventStream(`${gw.url}/v2/agent/widgets/job/${jobId}/events`, key)).events;

it('a stop of a job whose workflow is gone ends the turn with a turn.finished event and a webhook, and the job reads failed with code stopped', async () => {
  const jobId = await jobWithoutWorkflow();

  expect((await api('POST', `/v2/agent/widgets/job/${jobId}/stop`)).status).toBe(202);

  // The reconciler ends the turn (workflows/reconcile-jobs.ts stopOrphanTurn), as the job's workflow would have.
  const job = await settled(jobId);
  expect(job).toMatchObject({ status: 'failed', error: { code: 'stopped' } });
  const history = await gw.deps.temporal.workflow.getHandle(stopOrphanTurnWorkflowId(jobId, 1)).fetchHistory();
  expect((history.events ?? []).some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'finishStoppedTurn')).toBe(true);
  expect(job.turns).toEqual([expect.objectContaining({ turn: 1, status: 'stopped', error: expect.objectContaining({ code: 'stopped' }), finishedAt: expect.any(String) })]);
  const events = await eventsOf(jobId);
  expect(events.map((e) => [e.type, e.data.status])).toEqual([
    ['turn.started', undefined],
    ['status', 'active'],
    ['turn.finished', 'stopped'],
    ['status', 'failed'],
  ]);
  expect(await delivery(jobId, 'agent_job.turn_finished')).toMatchObject({ verified: true, status: 204, body: { data: { job: { id: jobId, status: 'failed', turns: [{ status: 'stopped' }] } } } });
  expect(await delivery(jobId, 'agent_job.failed')).toMatchObject({ verified: true, body: { data: { job: { id: jobId, error: { code: 'stopped' } } } } });
});

it('a retry that could not be delivered ends its attempt the same way: turn.finished, failed, and a webhook', async () => {
  const jobId = await jobWithoutWorkflow();
  expect((await api('POST', `/v2/agent/widgets/job/${jobId}/stop`)).status).toBe(202);
  await settled(jobId);

  const retry = await api('POST', `/v2/agent/widgets/job/${jobId}/retry`);
  expect(retry.status).toBe(503);
  expect(await retry.json()).toMatchObject({ code: 'unavailable' });

  const job = await (await api('GET', `/v2/agent/widgets/job/${jobId}`)).json();
  expect(job).toMatchObject({ status: 'failed', error: { code: 'unavailable' } });
  expect(job.turns).toEqual([expect.objectContaining({ turn: 1, status: 'failed', error: expect.objectContaining({ code: 'unavailable' }) })]);
  // The second attempt opens and ends in the stream, after the stopped first one.
  const events = await eventsOf(jobId);
  expect(events.slice(4).map((e) => [e.type, e.data.status ?? e.data.attempt])).toEqual([
    ['turn.started', 2],
    ['status', 'active'],
    ['turn.finished', 'failed'],
    ['status', 'failed'],
  ]);
  const retried = await delivery(jobId, 'agent_job.failed', (j) => j.error?.code === 'unavailable');
  expect(retried).toMatchObject({ verified: true, body: { data: { job: { id: jobId, status: 'failed', turns: [{ status: 'failed' }] } } } });
});
