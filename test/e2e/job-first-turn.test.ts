import { callApi } from '../support/http';
import { readEventStream } from '../support/sse';
import { workerlessSuite } from '../support/workerless-jobs';

// Issue 13: a create stores only the job, yet a client sees its first turn and opening events at once, with the ids
// they keep once stored. No worker runs, so nothing else writes to the job.

const suite = workerlessSuite();

const jobPath = (id: string) => `/v2/agent/widgets/job/${id}`;
const summary = (events: any[]) => events.map((e) => [e.id, e.type, e.turn, e.data.status ?? e.data.prompt]);

it('shows the first turn and its events right after a create, and the same ids once follow-ups and an archive are stored', async () => {
  const created = await (await callApi(suite.gw.url, suite.key, 'POST', '/v2/agent/widgets/job', { prompt: 'fix the typo' })).json();
  const db = suite.gw.deps.mongo.db;
  expect(await db.collection('job_turns').countDocuments({ jobId: created.id })).toBe(0);

  const job = await (await callApi(suite.gw.url, suite.key, 'GET', jobPath(created.id))).json();
  expect(job.turns).toMatchObject([{ turn: 1, prompt: 'fix the typo', status: 'active', startedAt: created.createdAt, finishedAt: null }]);
  const first = await readEventStream(`${suite.gw.url}${jobPath(created.id)}/events`, suite.key, { stopWhen: (events) => events.length >= 2 });
  expect(summary(first.events)).toEqual([
    [1, 'turn.started', 1, 'fix the typo'],
    [2, 'status', 1, 'active'],
  ]);
  expect(first.events.map((e) => e.sseId)).toEqual(['1', '2']);

  // A follow-up and an archive store the first turn's events before theirs, so every id stays what it was.
  expect((await callApi(suite.gw.url, suite.key, 'POST', `${jobPath(created.id)}/message`, { prompt: 'and the other one' })).status).toBe(200);
  expect((await callApi(suite.gw.url, suite.key, 'POST', `${jobPath(created.id)}/archive`)).status).toBe(200);
  const all = await readEventStream(`${suite.gw.url}${jobPath(created.id)}/events`, suite.key);
  expect(all.events.slice(0, 2)).toEqual(first.events);
  expect(summary(all.events)).toEqual([
    [1, 'turn.started', 1, 'fix the typo'],
    [2, 'status', 1, 'active'],
    [3, 'turn.started', 2, 'and the other one'],
    [4, 'status', 2, 'active'],
    [5, 'status', 2, 'archived'],
  ]);
  const resumed = await readEventStream(`${suite.gw.url}${jobPath(created.id)}/events`, suite.key, { lastEventId: '1' });
  expect(resumed.events.map((e) => e.id)).toEqual([2, 3, 4, 5]);
  const after = await (await callApi(suite.gw.url, suite.key, 'GET', jobPath(created.id))).json();
  expect(after.turns.map((t: any) => [t.turn, t.prompt])).toEqual([
    [1, 'fix the typo'],
    [2, 'and the other one'],
  ]);
  expect(after.turns[0]).toEqual(job.turns[0]);
});
