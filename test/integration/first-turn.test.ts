import type { JobDoc } from '../../src/jobs/job';
import { JobEventStore } from '../../src/jobs/job-events';
import { TurnStore } from '../../src/jobs/job-turns';
import { testConfig } from '../support/config';
import { activeJobDoc } from '../support/job-docs';
import { testDatabaseSuite } from '../support/test-database';

// A create stores only the job (issue 13): turn 1 and its two opening events read as derived from it until the first
// write stores them, and then read the same. Real MongoDB protocol (FerretDB), no gateway.

const config = testConfig();
const db = testDatabaseSuite(config);

let n = 0;
async function newJob(implied = true): Promise<string> {
  const at = new Date(Date.now() - 1000);
  const id = `job_first${++n}`;
  await db.mongo.db.collection<JobDoc>('jobs').insertOne(activeJobDoc(id, { at, ...(implied ? { firstTurnImplied: true } : {}) }));
  return id;
}

const step = (key: string) => ({ key, type: 'step' as const, turn: 1, data: { tool: 'write_file', path: key } });
const stored = (collection: string, jobId: string) => db.mongo.db.collection(collection).countDocuments({ jobId });

describe('an implied first turn', () => {
  it('reads as derived before anything is stored, and the first writes store exactly what was shown', async () => {
    const jobId = await newJob();
    const turns = new TurnStore(db.mongo.db);
    const events = new JobEventStore(db.mongo.db);
    const shownTurn = await turns.get(jobId, 1);
    expect(shownTurn).toMatchObject({ turn: 1, prompt: 'fix the typo', status: 'active', attempt: 1, usage: { inputTokens: 0, outputTokens: 0 } });
    expect(await turns.list(jobId)).toEqual([shownTurn]);
    const shownEvents = await events.after(jobId, 0);
    expect(shownEvents.map((e) => [e.seq, e.type, e.data])).toEqual([
      [1, 'turn.started', { prompt: 'fix the typo', attempt: 1 }],
      [2, 'status', { status: 'active' }],
    ]);
    expect((await events.after(jobId, 1)).map((e) => e.seq)).toEqual([2]);
    expect(await events.after(jobId, 2)).toEqual([]);
    expect([await stored('job_turns', jobId), await stored('job_events', jobId)]).toEqual([0, 0]);

    // The worker's first model step: usage on the turn, a step event after the opening ones.
    await turns.addUsage(jobId, 1, { inputTokens: 10, outputTokens: 5 });
    expect(await new JobEventStore(db.mongo.db).append(jobId, step('a'))).toBe(3);
    expect(await turns.get(jobId, 1)).toEqual({ ...shownTurn, usage: { inputTokens: 10, outputTokens: 5 } });
    const after = await events.after(jobId, 0);
    expect(after.slice(0, 2)).toEqual(shownEvents);
    expect(after.map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('is stored once when several writers find it missing at the same time, with ids that stay 1..N', async () => {
    const jobId = await newJob();
    const writers = Array.from({ length: 4 }, () => new JobEventStore(db.mongo.db));
    const ids = await Promise.all(Array.from({ length: 12 }, (_, i) => writers[i % 4]!.append(jobId, step(`s${i}`))));
    expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 3));
    const all = await writers[0]!.after(jobId, 0);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 14 }, (_, i) => i + 1));
    expect(all.slice(0, 2).map((e) => e.key)).toEqual(['t1:started:1', 't1:status:active:1']);
  });

  it('ends once when a stop finishes a turn nobody stored yet', async () => {
    const jobId = await newJob();
    const turns = new TurnStore(db.mongo.db);
    expect(await turns.finish(jobId, 1, { status: 'stopped', error: { code: 'stopped', message: 'stopped' } })).toBe(true);
    expect(await turns.finish(jobId, 1, { status: 'failed' })).toBe(false);
    expect(await turns.get(jobId, 1)).toMatchObject({ status: 'stopped', prompt: 'fix the typo', error: { code: 'stopped' } });
  });

  it('is not derived for a job that stored its first turn itself', async () => {
    const jobId = await newJob(false);
    const turns = new TurnStore(db.mongo.db);
    expect(await turns.get(jobId, 1)).toBeNull();
    expect(await turns.list(jobId)).toEqual([]);
    expect(await new JobEventStore(db.mongo.db).after(jobId, 0)).toEqual([]);
    expect(await new JobEventStore(db.mongo.db).append(jobId, step('a'))).toBe(1);
  });
});
