import { JobLedger } from '../../src/jobs/ledger';
import { createJobStatusActivities } from '../../activities/agent-job/job-status';
import { callApi } from '../support/http';
import { workerlessSuite } from '../support/workerless-jobs';

// Issue 12 part 4: the job-state guards hold on the default stack (FerretDB/SQLite, whose conditional updates are not
// isolated). Through the real gateway over sockets; no worker runs, so turns stay where the requests put them, and a
// completion is the worker's real recordJobStatus activity called directly.

const suite = workerlessSuite();
const api = (method: string, path: string, body?: unknown) => callApi(suite.gw.url, suite.key, method, path, body);

async function createJob(prompt: string): Promise<string> {
  const r = await api('POST', '/v2/agent/widgets/job', { prompt });
  expect(r.status).toBe(201);
  return (await r.json()).id;
}

it('twenty follow-ups racing on one job each get their own turn, and none is lost', async () => {
  const id = await createJob('first instruction');
  const prompts = Array.from({ length: 20 }, (_, i) => `follow-up ${i}`);
  const answers = await Promise.all(prompts.map((prompt) => api('POST', `/v2/agent/widgets/job/${id}/message`, { prompt })));
  expect(answers.map((r) => r.status)).toEqual(prompts.map(() => 200));
  const given = await Promise.all(answers.map(async (r) => (await r.json()).turn as number));
  expect([...given].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));

  const job = await (await api('GET', `/v2/agent/widgets/job/${id}`)).json();
  expect(job.turn).toBe(21);
  expect(job.status).toBe('active');
  expect(job.turns.map((t: { turn: number }) => t.turn)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
  // Each turn holds the instruction of the request that was told that turn.
  const promptOfTurn = new Map(job.turns.map((t: { turn: number; prompt: string }) => [t.turn, t.prompt]));
  expect(given.map((turn) => promptOfTurn.get(turn))).toEqual(prompts);
});

it('a completion racing an archive leaves the job archived', async () => {
  const db = suite.gw.deps.mongo.db;
  const { recordJobStatus } = createJobStatusActivities({ ledger: new JobLedger(db) });
  const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => createJob(`task ${i}`)));
  await Promise.all(
    ids.flatMap((id) => [api('POST', `/v2/agent/widgets/job/${id}/archive`), recordJobStatus({ jobId: id, turn: 1, status: 'completed', prLink: `https://github.com/acme/widgets/pull/${id}` })]),
  );
  for (const id of ids) {
    const job = await (await api('GET', `/v2/agent/widgets/job/${id}`)).json();
    expect({ id, status: job.status, archived: job.archivedAt !== null }).toEqual({ id, status: 'archived', archived: true });
    // And an archived job takes no more instructions.
    expect((await api('POST', `/v2/agent/widgets/job/${id}/message`, { prompt: 'more' })).status).toBe(400);
  }
});
