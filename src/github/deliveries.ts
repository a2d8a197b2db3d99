import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '../store/duplicate-key';

/** What docent did with a webhook delivery from GitHub. */
export type DeliveryOutcome = 'processing' | 'turn_started' | 'archived' | 'answered_archived' | 'refused' | 'ignored' | 'docs_sync_started';

/** One delivery GitHub sent to POST /github/webhook, kept so a redelivery does nothing and an admin sees why. */
export interface GitHubDeliveryDoc {
  /** X-GitHub-Delivery: unique, so the same delivery is acted on once. */
  _id: string;
  event: string;
  action?: string;
  /** `owner/name`, lower-cased: the projects on this repository see the delivery. */
  repository?: string;
  pullNumber?: number;
  author?: string;
  /** The job's project, when the delivery was about a job: only that project's admins see it. */
  projectId?: string;
  jobId?: string;
  turn?: number;
  outcome: DeliveryOutcome;
  /** Why it was ignored or refused, in words an admin can act on. */
  reason?: string;
  receivedAt: Date;
  /** The TTL index removes the record then; a redelivery that late is acted on again. */
  expiresAt: Date;
}

/** Deliveries are kept this long: GitHub redelivers within hours, and an admin looks back a few weeks at most. */
export const deliveryRetentionMs = 30 * 24 * 3600 * 1000;
/** The most a project's list shows, newest first. */
export const deliveryListCap = 100;

export async function ensureGitHubDeliveryIndexes(db: Db): Promise<void> {
  const deliveries = db.collection('github_deliveries');
  await deliveries.createIndex({ repository: 1, receivedAt: -1 });
  // FerretDB may not expire documents; the list reads only unexpired ones either way.
  await deliveries.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }).catch(() => deliveries.createIndex({ expiresAt: 1 }));
}

export const repositoryKey = (owner: string, repo: string) => `${owner}/${repo}`.toLowerCase();

/** The deliveries collection: claim by id (once), settle with what was done, list for a repository. */
export class GitHubDeliveryStore {
  private readonly deliveries: Collection<GitHubDeliveryDoc>;

  constructor(db: Db) {
    this.deliveries = db.collection<GitHubDeliveryDoc>('github_deliveries');
  }

  /** Records a delivery as being handled; false when it was seen before (a redelivery or a replay). */
  async claim(id: string, event: string, now = new Date()): Promise<boolean> {
    try {
      await this.deliveries.insertOne({ _id: id, event, outcome: 'processing', receivedAt: now, expiresAt: new Date(now.getTime() + deliveryRetentionMs) });
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  /** What was done with it, and what it was about. */
  async settle(id: string, record: Omit<GitHubDeliveryDoc, '_id' | 'event' | 'receivedAt' | 'expiresAt'>): Promise<void> {
    await this.deliveries.updateOne({ _id: id }, { $set: record });
  }

  /** Forgets a delivery whose handling failed, so GitHub's redelivery is acted on. */
  async release(id: string): Promise<void> {
    await this.deliveries.deleteOne({ _id: id, outcome: 'processing' });
  }

  /** A repository's deliveries that no other project's job owns, newest first. */
  list(repository: string, projectId: string, now = new Date()): Promise<GitHubDeliveryDoc[]> {
    return this.deliveries
      .find({ repository, expiresAt: { $gt: now }, $or: [{ projectId }, { projectId: { $exists: false } }] })
      .sort({ receivedAt: -1 })
      .limit(deliveryListCap)
      .toArray();
  }
}

export function deliveryToJson(d: GitHubDeliveryDoc) {
  return {
    id: d._id,
    event: d.event,
    action: d.action ?? null,
    repository: d.repository ?? null,
    pullNumber: d.pullNumber ?? null,
    author: d.author ?? null,
    jobId: d.jobId ?? null,
    turn: d.turn ?? null,
    outcome: d.outcome,
    reason: d.reason ?? null,
    receivedAt: d.receivedAt.toISOString(),
  };
}
