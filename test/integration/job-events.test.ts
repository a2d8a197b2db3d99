import { MongoClient } from 'mongodb';
import { JobEventStore } from '../../src/jobs/job-events';
import { testConfig } from '../support/config';
import { testDatabaseSuite } from '../support/test-database';

const config = testConfig();
const db = testDatabaseSuite(config);

const event = (key: string) => ({ key, type: 'step' as const, turn: 1, data: { tool: 'write_file', path: key } });

describe('job events', () => {
  it('get ids 1..N with no gap or repeat when two processes append at once, and a retried key keeps its id', async () => {
    const gateway = new JobEventStore(db.mongo.db);
    const worker = new JobEventStore(db.mongo.db);
    await gateway.appendFirst('job_race', [event('started'), event('active')]);
    const ids = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? gateway : worker).append('job_race', event(`e${i}`))));
    expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 3));
    // An activity retried after its write landed stores nothing new.
    expect(await worker.append('job_race', event('e4'))).toBe(ids[4]);
    expect(await gateway.append('job_race', event('started'))).toBe(1);
    // A process that never saw the job finds the next id by itself.
    expect(await new JobEventStore(db.mongo.db).append('job_race', event('late'))).toBe(33);
    expect((await gateway.after('job_race', 0)).map((e) => e.seq)).toEqual(Array.from({ length: 33 }, (_, i) => i + 1));
  });

  it('append with one insert and no query while the process knows the job', async () => {
    const monitored = new MongoClient(config.mongo.url, { monitorCommands: true });
    const commands: string[] = [];
    monitored.on('commandStarted', (e) => commands.push(e.commandName));
    try {
      const store = new JobEventStore(monitored.db(config.mongo.db));
      await store.appendFirst('job_quiet', [event('a'), event('b')]);
      commands.length = 0;
      for (let i = 0; i < 5; i++) await store.append('job_quiet', event(`c${i}`));
      expect(commands).toEqual(['insert', 'insert', 'insert', 'insert', 'insert']);
    } finally {
      await monitored.close();
    }
  });
});
