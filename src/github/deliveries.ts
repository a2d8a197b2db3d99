import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '../store/duplicate-key';
import { ensureWebhookSecretIndexes } from './webhook-secrets';

/**
 * What docent did with a webhook delivery from GitHub. `queued`: verified and recorded, its work handed to its durable
 * step (workflows/github-delivery.ts); `failed`: that step gave up, with the reason. `processing`: records made before
 * the intake answered first.
 */
export type DeliveryOutcome = 'processing' | 'queued' | 'failed' | 'turn_started' | 'archived' | 'answered_archived' | 'refused' | 'ignored' | 'docs_sync_started' | 'automation_started';

/** What one automation did with a delivery: its run started a job, or was refused or failed, and why. */
export interface DeliveryAutomationRun {
  projectId: string;
  automationId: string;
  status: 'started' | 'refused' | 'failed';
  jobId?: string;
  reason?: string;
}

/** One delivery GitHub sent to POST /github/webhook, kept so a redelivery does nothing and an admin sees why. */
export interface GitHubDeliveryDoc {
  /** X-GitHub-Delivery, after the prefix of the scope that verified it (src/github/webhook-service.ts): unique, so the same delivery is acted on once there. */
  _id: string;
  /** X-GitHub-Delivery as GitHub sent it (absent in records made before scopes: `_id`). */
  deliveryId?: string;
  event: string;
  action?: string;
  /** `owner/name`, lower-cased: the projects on this repository see the delivery. */
  repository?: string;
  pullNumber?: number;
  author?: string;
  /** The job's project, when the delivery was about a job: only that project's admins see it. */
  projectId?: string;
  /** Token mode: the project whose own webhook secret signed it; only that project's admins see it. */
  verifiedFor?: string;
  /** The organization's forge connection whose webhook received it (absent: the deployment's): only that organization sees it. */
  forgeId?: string;
  orgId?: string;
  /** A push: the docs domains whose sync it started; each project sees only its own. */
  docsDomains?: string[];
  /** The automations the delivery's event started (or that refused it), in any project: each project sees its own. */
  automationRuns?: DeliveryAutomationRun[];
  jobId?: string;
  turn?: number;
  outcome: DeliveryOutcome;
  /** Why it was ignored or refused, in words an admin can act on. */
  reason?: string;
  receivedAt: Date;
  /** The TTL index removes the record then; a redelivery that late is acted on again. */
  expiresAt: Date;
}

/** What handling a delivery recorded: its outcome and what it was about. */
export type DeliveryHandling = Omit<GitHubDeliveryDoc, '_id' | 'event' | 'receivedAt' | 'expiresAt' | 'repository' | 'verifiedFor' | 'deliveryId'>;

/** What a delivery's record says before it is handled: where it came from and what it names. */
export type DeliveryContext = Pick<GitHubDeliveryDoc, 'action' | 'repository' | 'verifiedFor' | 'forgeId' | 'orgId'>;

/** Deliveries are kept this long: GitHub redelivers within hours, and an admin looks back a few weeks at most. */
export const deliveryRetentionMs = 30 * 24 * 3600 * 1000;
/** The most a project's list shows, newest first. */
export const deliveryListCap = 100;

/** What a delivery is about (event, action, repository and the comment or pull request), claimed once whatever its id. */
interface DeliverySubjectDoc {
  _id: string;
  deliveryId: string;
  expiresAt: Date;
}

export async function ensureGitHubDeliveryIndexes(db: Db): Promise<void> {
  const deliveries = db.collection('github_deliveries');
  await deliveries.createIndex({ repository: 1, receivedAt: -1 });
  await deliveries.createIndex({ forgeId: 1, receivedAt: -1 }, { sparse: true });
  // FerretDB may not expire documents; the list reads only unexpired ones either way.
  await deliveries.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }).catch(() => deliveries.createIndex({ expiresAt: 1 }));
  const subjects = db.collection('github_delivery_subjects');
  await subjects.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }).catch(() => subjects.createIndex({ expiresAt: 1 }));
  await ensureWebhookSecretIndexes(db);
}

export const repositoryKey = (owner: string, repo: string) => `${owner}/${repo}`.toLowerCase();

/** The deliveries collection: claim by id (once), settle with what was done, list for a repository. */
export class GitHubDeliveryStore {
  private readonly deliveries: Collection<GitHubDeliveryDoc>;
  private readonly subjects: Collection<DeliverySubjectDoc>;

  constructor(db: Db) {
    this.deliveries = db.collection<GitHubDeliveryDoc>('github_deliveries');
    this.subjects = db.collection<DeliverySubjectDoc>('github_delivery_subjects');
  }

  /**
   * Records what a delivery is about as handled; false when another delivery about the same was (X-GitHub-Delivery is
   * not signed, so a captured body replays under a new id).
   */
  async claimSubject(subject: string, deliveryId: string, now = new Date()): Promise<boolean> {
    try {
      await this.subjects.insertOne({ _id: subject, deliveryId, expiresAt: new Date(now.getTime() + deliveryRetentionMs) });
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  /**
   * Records a delivery, with what it is about and its outcome (`queued` until its durable step handles it); the record
   * of an earlier delivery with this id when it was seen before (a redelivery or a replay).
   */
  async claim(id: string, event: string, deliveryId: string, record: DeliveryContext & DeliveryHandling, now = new Date()): Promise<GitHubDeliveryDoc | null> {
    try {
      await this.deliveries.insertOne({ ...record, _id: id, deliveryId, event, receivedAt: now, expiresAt: new Date(now.getTime() + deliveryRetentionMs) });
      return null;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const earlier = await this.deliveries.findOne({ _id: id });
      if (!earlier) throw err;
      return earlier;
    }
  }

  /** A delivery's record. */
  get(id: string): Promise<GitHubDeliveryDoc | null> {
    return this.deliveries.findOne({ _id: id });
  }

  /** What was done with it, and what it was about. */
  async settle(id: string, record: DeliveryContext & DeliveryHandling): Promise<void> {
    await this.deliveries.updateOne({ _id: id }, { $set: record });
  }

  /** What its durable step did with a queued delivery; false when it was settled before (the step ran already). */
  async settleQueued(id: string, record: DeliveryHandling): Promise<boolean> {
    const r = await this.deliveries.updateOne({ _id: id, outcome: 'queued' }, { $set: record });
    return r.modifiedCount === 1;
  }

  /** What one forge connection's webhook received, newest first: its organization's whole log, whatever repository each names. */
  ofConnection(forgeId: string, now = new Date()): Promise<GitHubDeliveryDoc[]> {
    return this.deliveries
      .find({ expiresAt: { $gt: now }, forgeId })
      .sort({ receivedAt: -1 })
      .limit(deliveryListCap)
      .toArray();
  }

  /** Forgets a delivery whose work could not be handed on, so GitHub's redelivery is acted on. */
  async release(id: string): Promise<void> {
    await this.deliveries.deleteOne({ _id: id, outcome: { $in: ['processing', 'queued'] } });
    await this.subjects.deleteMany({ deliveryId: id });
  }

  /**
   * A repository's deliveries that neither another project's job owns nor another project's secret signed, and those
   * of other repositories (a code repository's merged pull request) that ran one of the project's automations, newest first.
   */
  list(repository: string, projectId: string, forgeId: string | undefined, now = new Date()): Promise<GitHubDeliveryDoc[]> {
    const ours = (field: 'projectId' | 'verifiedFor') => ({ $or: [{ [field]: projectId }, { [field]: { $exists: false } }] });
    // Only deliveries of the connection the project's repository resolved through: another tenant's may name the same repository.
    const connection = forgeId && forgeId !== 'deployment' ? { forgeId } : { forgeId: { $exists: false } };
    return this.deliveries
      .find({ expiresAt: { $gt: now }, $or: [{ repository, ...connection, $and: [ours('projectId'), ours('verifiedFor')] }, { 'automationRuns.projectId': projectId }] })
      .sort({ receivedAt: -1 })
      .limit(deliveryListCap)
      .toArray();
  }
}

export function deliveryToJson(d: GitHubDeliveryDoc) {
  return {
    id: d.deliveryId ?? d._id,
    event: d.event,
    action: d.action ?? null,
    repository: d.repository ?? null,
    pullNumber: d.pullNumber ?? null,
    author: d.author ?? null,
    jobId: d.jobId ?? null,
    turn: d.turn ?? null,
    automationRuns: (d.automationRuns ?? []).map((r) => ({ automationId: r.automationId, status: r.status, jobId: r.jobId ?? null, reason: r.reason ?? null })),
    outcome: d.outcome,
    reason: d.reason ?? null,
    receivedAt: d.receivedAt.toISOString(),
  };
}
