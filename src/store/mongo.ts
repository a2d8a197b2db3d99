import { createHash } from 'node:crypto';
import { ensureGitHubDeliveryIndexes } from '../github/deliveries';
import { ensureForgeIndexes } from '../forges/forge-store';
import { MongoClient, type Db, type MongoClientOptions } from 'mongodb';
import { ensureJobEventIndexes } from '../jobs/job-events';
import { ensureJobIndexes } from '../jobs/job-store';
import { ensureAutomationIndexes } from '../automations/automation-store';
import { ensureTurnIndexes } from '../jobs/job-turns';
import { ensureDiffIndexes } from '../jobs/job-diffs';
import { ensureImageIndexes } from '../jobs/job-images';
import { ensureApiKeyIndexes } from '../auth/api-keys';
import type { ReadConcernLevel } from '../config';
import { ensureLimitIndexes } from '../limits/fixed-window';
import { ensureTenancyIndexes } from '../tenancy/store';
import { ensureWebhookIndexes } from '../webhooks/store';
import { ensureSearchIndexes } from '../assistant/search-log';
import { ensureAuditIndexes } from '../admin/audit';
import { ensureConsoleSessionIndexes } from '../auth/console-sessions';
import { ensureSignInLimitIndexes } from '../auth/console-sign-in-limits';

export interface Mongo {
  client: MongoClient;
  db: Db;
}

/**
 * A client that keeps trying to connect after a failed connection attempt. Driver 7 closes its topology when a
 * connection attempt fails (MongoDB down at start) and then fails every operation with MongoTopologyClosedError for
 * good; connect() opens a fresh topology on the same client, so the Db and Collection handles the stores hold recover.
 * Once connected, the driver's own monitoring rides out later outages, so retries happen only while never connected.
 */
class ReconnectingMongoClient extends MongoClient {
  private closing = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(url: string, options: MongoClientOptions, retryMs: number) {
    super(url, options);
    this.on('topologyClosed', () => {
      if (this.closing || this.retry) return;
      this.retry = setTimeout(() => {
        this.retry = undefined;
        // A failed attempt closes its topology again, which schedules the next one.
        if (!this.closing) this.connect().catch(() => undefined);
      }, retryMs);
      this.retry.unref();
    });
  }

  override async close(force?: boolean): Promise<void> {
    this.closing = true;
    clearTimeout(this.retry);
    await super.close(force);
  }
}

/** Read and write concerns for a replica set (DOCENT_MONGO_READ_CONCERN, DOCENT_MONGO_WRITE_CONCERN); unset keeps the URL's. */
export interface MongoConcerns {
  readConcern?: ReadConcernLevel;
  writeConcern?: 'majority' | number;
}

/** Creates the client without waiting for the server, so the gateway starts (and reports not ready) while MongoDB is down. */
export function createMongo(url: string, dbName: string, timeoutMs: number, concerns: MongoConcerns = {}): Mongo {
  const options: MongoClientOptions = {
    serverSelectionTimeoutMS: timeoutMs,
    appName: 'docent',
    ...(concerns.readConcern && { readConcern: { level: concerns.readConcern } }),
    ...(concerns.writeConcern !== undefined && { writeConcern: { w: concerns.writeConcern } }),
  };
  const client = new ReconnectingMongoClient(url, options, Math.min(timeoutMs, 1_000));
  return { client, db: client.db(dbName) };
}

/** Every index docent's queries rely on, each store its own; each call is a no-op where the index exists. */
async function createAllIndexes(db: Db): Promise<void> {
  await ensureApiKeyIndexes(db);
  await ensureJobIndexes(db);
  await ensureAutomationIndexes(db);
  await ensureTenancyIndexes(db);
  await ensureLimitIndexes(db);
  await ensureJobEventIndexes(db);
  await ensureTurnIndexes(db);
  await ensureDiffIndexes(db);
  await ensureImageIndexes(db);
  await ensureWebhookIndexes(db);
  await ensureGitHubDeliveryIndexes(db);
  await ensureSearchIndexes(db);
  await ensureAuditIndexes(db);
  await ensureConsoleSessionIndexes(db);
  await ensureSignInLimitIndexes(db);
  await ensureForgeIndexes(db);
}

/** The collection of docent's own bookkeeping about the database; `indexes` records which index set was made. */
export const metaCollection = 'docent_meta';

/**
 * A digest of the indexes the stores ask for, read by running them against a recorder instead of the server: it
 * changes whenever a store adds or changes an index, with no version number to bump by hand.
 */
export async function indexSetDigest(): Promise<string> {
  const asked: unknown[] = [];
  const recorder = {
    collection: (name: string) => ({
      createIndex: async (key: unknown, options: unknown = {}) => {
        asked.push([name, key, options]);
        return '';
      },
    }),
  };
  await createAllIndexes(recorder as unknown as Db);
  return createHash('sha256').update(JSON.stringify(asked)).digest('hex');
}

/**
 * Makes the indexes docent's queries rely on; safe to run at every start. A database whose marker names this set
 * returns after one read: a `docent` command otherwise sent about 40 createIndexes commands each time it ran.
 */
export async function ensureIndexes(db: Db): Promise<void> {
  const digest = await indexSetDigest();
  const meta = db.collection<{ _id: string; digest?: string; at?: Date }>(metaCollection);
  if ((await meta.findOne({ _id: 'indexes' }))?.digest === digest) return;
  await createAllIndexes(db);
  // Written after every index exists: a start cut off halfway leaves no marker, and the next one makes them all.
  await meta.updateOne({ _id: 'indexes' }, { $set: { digest, at: new Date() } }, { upsert: true });
}
