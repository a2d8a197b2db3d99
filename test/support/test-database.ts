import { afterAll, beforeAll } from '@jest/globals';
import { createMongo, ensureIndexes, type Mongo } from '../../src/store/mongo';
import type { Config } from '../../src/config';

/** The suite's own database (named by its config) with docent's indexes, connected before its tests and dropped after them. */
export function testDatabaseSuite(config: Config): { readonly mongo: Mongo } {
  const suite = {} as { mongo: Mongo };
  beforeAll(async () => {
    suite.mongo = createMongo(config.mongo.url, config.mongo.db, 5_000);
    await ensureIndexes(suite.mongo.db);
  });
  afterAll(async () => {
    await suite.mongo?.db.dropDatabase();
    await suite.mongo?.client.close();
  });
  return suite;
}
