import type { JobDoc } from '../../src/jobs/job';
import { callApi } from '../support/http';
import { activeJobDoc } from '../support/job-docs';
import { workerlessSuite } from '../support/workerless-jobs';

// Issue 12 part 3: a gateway killed between the job insert and the workflow start leaves an active job with no
// workflow; a retried create with the same Idempotency-Key starts it. Real gateway and Temporal; no worker runs, so the
// workflow stays running where the test can see it.

const suite = workerlessSuite();

it('a retried create with the same Idempotency-Key starts the job a killed gateway left unstarted', async () => {
  // What the first gateway wrote before it died: the job, and no workflow.
  const orphan = activeJobDoc(`job_orphan${Date.now()}`, { model: suite.model.modelId, idempotencyKey: 'widgets:retry-me' });
  await suite.gw.deps.mongo.db.collection<JobDoc>('jobs').insertOne(orphan);
  const handle = suite.gw.deps.temporal.workflow.getHandle(`agent-job-${orphan._id}`);
  await expect(handle.describe()).rejects.toMatchObject({ name: 'WorkflowNotFoundError' });

  const r = await callApi(suite.gw.url, suite.key, 'POST', '/v2/agent/widgets/job', { prompt: 'fix the typo' }, { 'idempotency-key': 'retry-me' });
  expect(r.status).toBe(200);
  expect((await r.json()).id).toBe(orphan._id);
  expect((await handle.describe()).status.name).toBe('RUNNING');
  // The job shows its first turn, and a second retry starts nothing new.
  const job = await (await callApi(suite.gw.url, suite.key, 'GET', `/v2/agent/widgets/job/${orphan._id}`)).json();
  expect(job.turns.map((t: { turn: number; prompt: string; status: string }) => [t.turn, t.prompt, t.status])).toEqual([[1, 'fix the typo', 'active']]);
  const runId = (await handle.describe()).runId;
  expect((await callApi(suite.gw.url, suite.key, 'POST', '/v2/agent/widgets/job', { prompt: 'fix the typo' }, { 'idempotency-key': 'retry-me' })).status).toBe(200);
  expect((await handle.describe()).runId).toBe(runId);
});
