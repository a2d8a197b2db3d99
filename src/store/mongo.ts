import { MongoClient, type Db } from 'mongodb';
import { ensureLimitIndexes } from '../limits/fixed-window';

export interface Mongo {
  client: MongoClient;
  db: Db;
}

/** Creates the client without waiting for the server, so the gateway starts (and reports not ready) while MongoDB is down. */
export function createMongo(url: string, dbName: string, timeoutMs: number): Mongo {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: timeoutMs, appName: 'docent' });
  return { client, db: client.db(dbName) };
}

/** Creates the indexes docent's queries rely on; safe to run at every start. */
export async function ensureIndexes(db: Db): Promise<void> {
  await db.collection('api_keys').createIndex({ hash: 1 }, { unique: true });
  await db.collection('jobs').createIndex({ projectId: 1, createdAt: -1 });
  await db.collection('jobs').createIndex({ idempotencyKey: 1 }, { unique: true, sparse: true });
  // Sparse, so projects without a documentation domain do not collide (FerretDB has no partial indexes).
  await db.collection('projects').createIndex({ domain: 1 }, { unique: true, sparse: true });
  await db.collection('api_keys').createIndex({ projectId: 1 });
  await ensureLimitIndexes(db);
}

/** MongoDB's (and FerretDB's) duplicate-key error, the signal that a unique index refused an insert. */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}
