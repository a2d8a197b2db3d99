import type { CommandStartedEvent } from 'mongodb';
import { createMongo } from '../../src/store/mongo';
import { testConfig } from '../support/config';

// The concerns a replica-set deployment sets (DOCENT_MONGO_READ_CONCERN / _WRITE_CONCERN) travel with every command.
const config = testConfig({ DOCENT_MONGO_READ_CONCERN: 'majority', DOCENT_MONGO_WRITE_CONCERN: 'majority' });

it('sends the configured read and write concerns with reads and writes, and the database accepts them', async () => {
  const mongo = createMongo(config.mongo.url, config.mongo.db, 5_000, config.mongo);
  const commands: CommandStartedEvent[] = [];
  // Command monitoring is a runtime switch of the driver (not in its public types): it shows what each command carries.
  (mongo.client as unknown as { monitorCommands: boolean }).monitorCommands = true;
  mongo.client.on('commandStarted', (e) => commands.push(e));
  try {
    const jobs = mongo.db.collection<{ _id: string; status: string }>('jobs');
    await jobs.insertOne({ _id: 'job_1', status: 'active' });
    expect(await jobs.findOne({ _id: 'job_1' })).toMatchObject({ status: 'active' });
    const insert = commands.find((c) => c.commandName === 'insert')!;
    const find = commands.find((c) => c.commandName === 'find')!;
    expect(insert.command.writeConcern).toEqual({ w: 'majority' });
    expect(find.command.readConcern).toEqual({ level: 'majority' });
  } finally {
    await mongo.db.dropDatabase();
    await mongo.client.close();
  }
});
