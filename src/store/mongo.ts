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

/** Creates the indexes docent's queries rely on, each store its own; safe to run at every start. */
export async function ensureIndexes(db: Db): Promise<void> {
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
