import type { CommandStartedEvent } from 'mongodb';
import { createMongo, ensureIndexes, indexSetDigest, metaCollection, type Mongo } from '../../src/store/mongo';
import { testConfig } from '../support/config';

// Every gateway, worker and `docent` command ensures the indexes at its start. A database that already has this
// release's index set answers that with one read; one whose set is older or was never finished gets them all made.
const config = testConfig();
let mongo: Mongo;
const commands: CommandStartedEvent[] = [];
const sent = (name: string) => commands.filter((c) => c.commandName === name).length;
const marker = () => mongo.db.collection<{ _id: string; digest?: string }>(metaCollection);
const jobIndexNames = async () => (await mongo.db.collection('jobs').listIndexes().toArray()).map((i) => i.name as string).sort();

beforeAll(() => {
  mongo = createMongo(config.mongo.url, config.mongo.db, 5_000);
  // Command monitoring is a runtime switch of the driver (not in its public types): it shows what each start sends.
  (mongo.client as unknown as { monitorCommands: boolean }).monitorCommands = true;
  mongo.client.on('commandStarted', (e) => commands.push(e));
});
afterAll(async () => {
  await mongo?.db.dropDatabase();
  await mongo?.client.close();
});
beforeEach(() => {
  commands.length = 0;
});

it('makes every index on a new database, then answers the next start with one read', async () => {
  await ensureIndexes(mongo.db);
  expect(sent('createIndexes')).toBeGreaterThanOrEqual(30);
  expect(await jobIndexNames()).toEqual(expect.arrayContaining(['idempotencyKey_1', 'projectId_1_createdAt_-1']));

  commands.length = 0;
  await ensureIndexes(mongo.db);
  expect(sent('createIndexes')).toBe(0);
  expect(commands.map((c) => c.commandName)).toEqual(['find']);
});

it('makes the indexes again where the marker names another index set, as after an upgrade that adds one', async () => {
  await mongo.db.collection('jobs').dropIndex('idempotencyKey_1');
  await marker().updateOne({ _id: 'indexes' }, { $set: { digest: 'the previous release' } });
  await ensureIndexes(mongo.db);
  expect(await jobIndexNames()).toContain('idempotencyKey_1');
  expect(await marker().findOne({ _id: 'indexes' })).toMatchObject({ digest: await indexSetDigest() });
});

it('makes them all where a start was cut off before its marker', async () => {
  await marker().deleteOne({ _id: 'indexes' });
  await mongo.db.collection('job_events').dropIndexes();
  await ensureIndexes(mongo.db);
  expect((await mongo.db.collection('job_events').listIndexes().toArray()).map((i) => i.name)).toEqual(expect.arrayContaining(['jobId_1_seq_1', 'jobId_1_key_1']));
});
