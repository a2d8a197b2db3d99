import type { Db, Filter } from 'mongodb';
import { AppError } from '../errors';
import { isDuplicateKey } from '../store/duplicate-key';
import type { JobDoc, JobOrigin, JobStatus } from './job';
import { JobState } from './job-state';
import { TurnStore, type NextTurnExtras } from './job-turns';

/** What a project's job list may be narrowed to (GET …/jobs, ListAgentJobs). */
export interface JobListFilters {
  status?: JobStatus;
  origin?: JobOrigin;
  automationId?: string;
  /** Text the first instruction contains, case-insensitive. */
  instruction?: string;
  /** ISO times: created at or after, and before. */
  createdAfter?: string;
  createdBefore?: string;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export interface JobPage {
  jobs: JobDoc[];
  nextCursor: string | null;
}

// Cursors are opaque to clients: the sort key of the last job returned.
function encodeCursor(doc: JobDoc): string {
  return Buffer.from(JSON.stringify([doc.createdAt.getTime(), doc._id])).toString('base64url');
}

function decodeCursor(cursor: string): [number, string] {
  try {
    const [t, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof t === 'number' && typeof id === 'string') return [t, id];
  } catch {
    // fall through
  }
  throw new AppError('invalid_argument', 'cursor is not one this API returned');
}

export async function ensureJobIndexes(db: Db): Promise<void> {
  await db.collection('jobs').createIndex({ projectId: 1, createdAt: -1 });
  await db.collection('jobs').createIndex({ idempotencyKey: 1 }, { unique: true, sparse: true });
  await db.collection('jobs').createIndex({ projectId: 1, automationId: 1, createdAt: -1 }, { sparse: true });
}

/** How many turn numbers a follow-up tries past the one it read before giving up (others claimed them first). */
const maxTurnClaims = 64;

export class JobStore {
  private readonly state: JobState;
  private readonly turns: TurnStore;

  constructor(private readonly db: Db) {
    this.state = new JobState(db);
    this.turns = new TurnStore(db);
  }

  private get jobs() {
    return this.db.collection<JobDoc>('jobs');
  }

  /** A job of another project is as absent as one that does not exist. */
  async get(projectId: string, jobId: string): Promise<JobDoc | null> {
    return this.jobs.findOne({ _id: jobId, projectId });
  }

  /** Inserts a new job; with an idempotency key already used, returns that job instead (created: false). */
  async insert(doc: JobDoc): Promise<{ job: JobDoc; created: boolean }> {
    try {
      await this.jobs.insertOne(doc);
      return { job: doc, created: true };
    } catch (err) {
      if (!isDuplicateKey(err) || !doc.idempotencyKey) throw err;
      const existing = await this.jobs.findOne({ idempotencyKey: doc.idempotencyKey });
      if (!existing) throw err;
      return { job: existing, created: false };
    }
  }

  /** Any project's job: for the worker and the reconciler, which act on a job id they were handed. */
  byId(jobId: string): Promise<JobDoc | null> {
    return this.jobs.findOne({ _id: jobId });
  }

  /** Active jobs unchanged since `before`: the reconciler's candidates. */
  staleActive(before: Date): Promise<JobDoc[]> {
    return this.jobs.find({ status: 'active', updatedAt: { $lt: before } }).toArray();
  }

  findByIdempotencyKey(key: string): Promise<JobDoc | null> {
    return this.jobs.findOne({ idempotencyKey: key });
  }

  remove(jobId: string): Promise<unknown> {
    return this.jobs.deleteOne({ _id: jobId });
  }

  /** The project's jobs newest first, `skip` then `take` of them (Mintlify's v1 list pages by offset). */
  listByOffset(projectId: string, skip: number, take: number): Promise<JobDoc[]> {
    return this.jobs.find({ projectId }).sort({ createdAt: -1, _id: -1 }).skip(skip).limit(take).toArray();
  }

  async list(projectId: string, opts: JobListFilters & { limit: number; cursor?: string }): Promise<JobPage> {
    const filter: Filter<JobDoc> = { projectId };
    if (opts.status) filter.status = opts.status;
    if (opts.automationId) filter.automationId = opts.automationId;
    const and: Filter<JobDoc>[] = [];
    // Jobs stored before origins were have none: they came from the API.
    if (opts.origin) and.push(opts.origin === 'api' ? { $or: [{ origin: 'api' }, { origin: { $exists: false } }] } : { origin: opts.origin });
    // The first instruction is prompts[0] (a create writes it; FerretDB has no $elemMatch on two fields). Matched as text, never as a pattern.
    if (opts.instruction) and.push({ 'prompts.0.prompt': { $regex: escapeRegExp(opts.instruction), $options: 'i' } });
    if (opts.createdAfter) and.push({ createdAt: { $gte: new Date(opts.createdAfter) } });
    if (opts.createdBefore) and.push({ createdAt: { $lt: new Date(opts.createdBefore) } });
    if (and.length) filter.$and = and;
    if (opts.cursor) {
      const [t, id] = decodeCursor(opts.cursor);
      const at = new Date(t);
      filter.$or = [{ createdAt: { $lt: at } }, { createdAt: at, _id: { $lt: id } }];
    }
    const docs = await this.jobs
      .find(filter)
      .sort({ createdAt: -1, _id: -1 })
      .limit(opts.limit + 1)
      .toArray();
    const jobs = docs.slice(0, opts.limit);
    return { jobs, nextCursor: docs.length > opts.limit ? encodeCursor(jobs[jobs.length - 1]!) : null };
  }

  /**
   * Accepts a follow-up as the next free turn, active again; null when the job is missing or archived. The turn is
   * claimed by inserting its record (an atomic insert, unlike a conditional update on FerretDB), so each of many
   * racing follow-ups gets its own turn and none is lost.
   */
  async beginTurn(projectId: string, jobId: string, prompt: string, extra: NextTurnExtras = {}): Promise<JobDoc | null> {
    const current = await this.get(projectId, jobId);
    if (!current || current.status === 'archived' || (await this.state.archivedAt(jobId))) return null;
    const now = new Date();
    let turn = current.turn + 1;
    for (let claimed = false; !claimed; ) {
      if (turn > current.turn + maxTurnClaims) throw new AppError('unavailable', 'the job is changing too often; send the message again');
      claimed = await this.turns.claim({ jobId, projectId, model: current.model, turn, prompt, at: now, ...extra });
      if (!claimed) turn++;
    }
    await this.jobs.updateOne(
      { _id: jobId, turn: { $lt: turn }, status: { $ne: 'archived' } },
      { $set: { turn, status: 'active', updatedAt: now }, $unset: { error: '', checks: '', checksPassed: '' } },
    );
    await this.state.settle(jobId);
    const after = await this.get(projectId, jobId);
    if (!after || after.status === 'archived') {
      // Archived meanwhile: the claimed turn never runs.
      await this.turns.finish(jobId, turn, { status: 'stopped', error: { code: 'failed_precondition', message: 'the job was archived' } });
      return null;
    }
    return { ...after, turn, updatedAt: now };
  }

  /** Ends the job's turn (the worker's recordJobStatus): only an active job at this very turn moves; an archive or a newer turn that raced it wins. */
  async finishTurn(jobId: string, turn: number, set: Partial<JobDoc>): Promise<boolean> {
    const r = await this.jobs.updateOne({ _id: jobId, turn, status: 'active' }, { $set: set });
    await this.state.settle(jobId);
    return r.modifiedCount === 1;
  }

  /** Moves a plan job's plan at this turn while it is active; `when` says from which plan state. */
  async setPlan(jobId: string, turn: number, when: Filter<JobDoc>, set: Pick<JobDoc, 'planStatus'> & Partial<Pick<JobDoc, 'plan' | 'planRevision'>>): Promise<boolean> {
    const r = await this.jobs.updateOne({ _id: jobId, turn, status: 'active', ...when }, { $set: { ...set, updatedAt: new Date() } });
    await this.state.settle(jobId); // an archive or a newer turn it raced wins
    return r.modifiedCount === 1;
  }

  /** Stores a gap-loop check on the job; an older turn's result never replaces a newer one. */
  async recordGapCheck(jobId: string, result: NonNullable<JobDoc['gapCheck']>): Promise<void> {
    await this.jobs.updateOne({ _id: jobId, $or: [{ gapCheck: { $exists: false } }, { 'gapCheck.turn': { $lte: result.turn } }] }, { $set: { gapCheck: result, updatedAt: new Date() } });
    await this.state.settle(jobId); // on FerretDB this write rewrites the whole job: an archive or a newer turn it raced wins
  }

  /** Makes a failed job active again at the same turn, for a retry; null when it is not failed at that turn. */
  async reactivate(projectId: string, jobId: string, turn: number): Promise<JobDoc | null> {
    const job = await this.jobs.findOneAndUpdate(
      { _id: jobId, projectId, turn, status: 'failed' },
      { $set: { status: 'active', updatedAt: new Date() }, $unset: { error: '' } },
      { returnDocument: 'after' },
    );
    if (!job) return null;
    await this.state.settle(jobId);
    const after = await this.get(projectId, jobId);
    return after && after.status === 'active' && after.turn === turn ? after : null;
  }

  /** Archives the job for good: the marker insert decides the first archive, and no later write can undo it. */
  async archive(projectId: string, jobId: string): Promise<{ job: JobDoc; wasActive: boolean } | null> {
    const before = await this.get(projectId, jobId);
    if (!before) return null;
    const { at, first } = await this.state.markArchived(jobId, new Date());
    // Set after the marker: a completion that wrote before it is overwritten here, one that wrote after it settles back.
    await this.jobs.updateOne({ _id: jobId, status: { $ne: 'archived' } }, { $set: { status: 'archived', archivedAt: at, updatedAt: new Date() } });
    const job = (await this.get(projectId, jobId)) ?? before;
    return { job, wasActive: first && before.status === 'active' };
  }
}
