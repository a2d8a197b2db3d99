import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { isDuplicateKey } from '../store/duplicate-key';
import type { JobOrigin } from '../jobs/job';
import type { AutomationDoc, AutomationRunDoc, AutomationSpec, GapCheckRecord, RunStatus } from './automation';

/** The collections this module owns: automations and the runs they started or refused. */
export async function ensureAutomationIndexes(db: Db): Promise<void> {
  await db.collection('automations').createIndex({ projectId: 1, createdAt: -1 });
  // GitHub deliveries look automations up by trigger across projects (src/github/automation-triggers.ts).
  await db.collection('automations').createIndex({ 'trigger.type': 1, projectId: 1 });
  await db.collection('automation_runs').createIndex({ eventKey: 1, status: 1 });
  // One run per event: a repeated delivery, or a retried schedule action, finds the first run.
  await db.collection('automation_runs').createIndex({ automationId: 1, eventKey: 1 }, { unique: true });
  await db.collection('automation_runs').createIndex({ automationId: 1, createdAt: -1 });
  await db.collection('automation_runs').createIndex({ projectId: 1, createdAt: -1 });
}

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/** The start of the UTC day `at` falls in: the daily caps count from there. */
export const startOfUtcDay = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));

/** A new automation, active, not yet stored: its id names its schedule before the insert. */
export function newAutomation(projectId: string, spec: AutomationSpec): AutomationDoc {
  const now = new Date();
  return { _id: newId('aut'), projectId, ...spec, paused: false, consecutiveFailures: 0, lastError: null, createdAt: now, updatedAt: now };
}

export class AutomationStore {
  constructor(private readonly db: Db) {}

  private get automations() {
    return this.db.collection<AutomationDoc>('automations');
  }

  private get runs() {
    return this.db.collection<AutomationRunDoc>('automation_runs');
  }

  async insert(doc: AutomationDoc): Promise<void> {
    await this.automations.insertOne(doc);
  }

  /** How many automations the project has (its cap: DOCENT_AUTOMATIONS_PER_PROJECT). */
  countOf(projectId: string): Promise<number> {
    return this.automations.countDocuments({ projectId });
  }

  /** The automations of a trigger type of these projects: an issue event finds its listeners. */
  withTrigger(type: AutomationDoc['trigger']['type'], projectIds: string[]): Promise<AutomationDoc[]> {
    return this.automations.find({ 'trigger.type': type, projectId: { $in: projectIds } }).toArray();
  }

  /**
   * Every automation of a trigger type listening to `repository` (any case), deployment-wide: those naming it, and,
   * for triggers that may name none (push), those of `ownProjects`, whose own repository it is. `onlyProject` narrows
   * it to one project (a delivery a project's own secret signed).
   */
  listeningTo(type: 'push' | 'merged_pull_request', repository: string, ownProjects: string[], onlyProject?: string): Promise<AutomationDoc[]> {
    const named = { 'trigger.repo': { $regex: `^${repository.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, $options: 'i' } };
    const own = { projectId: { $in: ownProjects }, 'trigger.repo': { $exists: false } };
    return this.automations.find({ 'trigger.type': type, $or: [named, ...(ownProjects.length ? [own] : [])], ...(onlyProject ? { projectId: onlyProject } : {}) }).toArray();
  }

  /** The run of these automations for an event that started a job, if any (an issue's job, for its follow-ups). */
  startedRunOf(automationIds: string[], eventKey: string): Promise<AutomationRunDoc | null> {
    return this.runs.findOne({ automationId: { $in: automationIds }, eventKey, status: 'started' }, { sort: { createdAt: -1 } });
  }

  /** An automation of another project is as absent as one that does not exist. */
  get(projectId: string, id: string): Promise<AutomationDoc | null> {
    return this.automations.findOne({ _id: id, projectId });
  }

  /** Any project's automation: for the worker, which acts on the id its schedule carries. */
  byId(id: string): Promise<AutomationDoc | null> {
    return this.automations.findOne({ _id: id });
  }

  list(projectId: string): Promise<AutomationDoc[]> {
    return this.automations.find({ projectId }).sort({ createdAt: -1, _id: -1 }).limit(500).toArray();
  }

  async update(projectId: string, id: string, set: Partial<AutomationSpec> & { paused?: boolean }): Promise<AutomationDoc | null> {
    return this.automations.findOneAndUpdate({ _id: id, projectId }, { $set: { ...set, updatedAt: new Date() } }, { returnDocument: 'after' });
  }

  async remove(projectId: string, id: string): Promise<boolean> {
    const r = await this.automations.deleteOne({ _id: id, projectId });
    if (r.deletedCount === 1) await this.runs.deleteMany({ automationId: id });
    return r.deletedCount === 1;
  }

  /** Records that the automation's latest run started a job (failed: false) or could not (failed: the reason). */
  async recordOutcome(id: string, failure: string | null): Promise<void> {
    const now = new Date();
    if (failure === null) await this.automations.updateOne({ _id: id }, { $set: { consecutiveFailures: 0, updatedAt: now } });
    else await this.automations.updateOne({ _id: id }, { $inc: { consecutiveFailures: 1 }, $set: { lastError: { message: failure, at: now }, updatedAt: now } });
  }

  /** Claims the event's run; a run for the same event already there is returned instead (created: false). */
  async claimRun(automation: Pick<AutomationDoc, '_id' | 'projectId'>, eventKey: string, origin: JobOrigin): Promise<{ run: AutomationRunDoc; created: boolean }> {
    const run: AutomationRunDoc = { _id: newId('run'), automationId: automation._id, projectId: automation.projectId, eventKey, origin, status: 'starting', createdAt: new Date() };
    try {
      await this.runs.insertOne(run);
      return { run, created: true };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const existing = await this.runs.findOne({ automationId: automation._id, eventKey });
      if (!existing) throw err;
      return { run: existing, created: false };
    }
  }

  async finishRun(run: AutomationRunDoc, outcome: { status: Exclude<RunStatus, 'starting'>; jobId?: string; turn?: number; reason?: string }): Promise<AutomationRunDoc> {
    await this.runs.updateOne({ _id: run._id }, { $set: outcome });
    return { ...run, ...outcome };
  }

  /** Runs that started a job since `since`: of one automation, or of the whole project. */
  startedSince(by: { automationId: string } | { projectId: string }, since: Date): Promise<number> {
    return this.runs.countDocuments({ ...by, status: 'started', createdAt: { $gte: since } });
  }

  /** Keeps the automation's latest check, so a user sees when it last looked even when it started nothing. */
  async recordCheck(id: string, check: GapCheckRecord): Promise<void> {
    await this.automations.updateOne({ _id: id }, { $set: { lastCheck: check } });
  }

  /** The automation's newest run of this origin that started a job: where the next window of its event begins. */
  lastStartedRun(automationId: string, origin: JobOrigin): Promise<AutomationRunDoc | null> {
    return this.runs.findOne({ automationId, origin, status: 'started' }, { sort: { createdAt: -1 } });
  }

  /** The automation's runs, newest first. */
  listRuns(automationId: string, limit: number): Promise<AutomationRunDoc[]> {
    return this.runs.find({ automationId }).sort({ createdAt: -1, _id: -1 }).limit(limit).toArray();
  }
}
