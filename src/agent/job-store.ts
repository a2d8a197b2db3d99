import type { Db, Filter } from 'mongodb';
import { AppError } from '../errors';
import { isDuplicateKey } from '../store/mongo';
import type { JobDoc, JobStatus } from './job';

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

export class JobStore {
  constructor(private readonly db: Db) {}

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

  findByIdempotencyKey(key: string): Promise<JobDoc | null> {
    return this.jobs.findOne({ idempotencyKey: key });
  }

  remove(jobId: string): Promise<unknown> {
    return this.jobs.deleteOne({ _id: jobId });
  }

  async list(projectId: string, opts: { status?: JobStatus; limit: number; cursor?: string }): Promise<JobPage> {
    const filter: Filter<JobDoc> = { projectId };
    if (opts.status) filter.status = opts.status;
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

  /** Accepts a follow-up as the next turn, active again; null when the job is missing or archived. */
  async beginTurn(projectId: string, jobId: string, prompt: string): Promise<JobDoc | null> {
    // Optimistic: the update applies only to the turn just read, so two racing follow-ups get distinct turns.
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.get(projectId, jobId);
      if (!current || current.status === 'archived') return null;
      const now = new Date();
      const turn = current.turn + 1;
      const next = await this.jobs.findOneAndUpdate(
        { _id: jobId, projectId, turn: current.turn, status: { $ne: 'archived' } },
        { $set: { turn, status: 'active', updatedAt: now }, $unset: { error: '', checks: '', checksPassed: '' }, $push: { prompts: { turn, prompt, at: now } } },
        { returnDocument: 'after' },
      );
      if (next) return next;
    }
    throw new AppError('unavailable', 'the job is changing too often; send the message again');
  }

  /** Marks a turn failed when its workflow could not be reached, so no job stays active with nobody working on it. */
  async failTurn(jobId: string, turn: number, error: { code: string; message: string }): Promise<void> {
    await this.jobs.updateOne({ _id: jobId, turn, status: 'active' }, { $set: { status: 'failed', error, updatedAt: new Date() } });
  }

  /** Makes a failed job active again at the same turn, for a retry; null when it is not failed at that turn. */
  reactivate(projectId: string, jobId: string, turn: number): Promise<JobDoc | null> {
    return this.jobs.findOneAndUpdate({ _id: jobId, projectId, turn, status: 'failed' }, { $set: { status: 'active', updatedAt: new Date() }, $unset: { error: '' } }, { returnDocument: 'after' });
  }

  async archive(projectId: string, jobId: string): Promise<{ job: JobDoc; wasActive: boolean } | null> {
    const now = new Date();
    const before = await this.jobs.findOneAndUpdate(
      { _id: jobId, projectId, status: { $ne: 'archived' } },
      { $set: { status: 'archived', archivedAt: now, updatedAt: now } },
      { returnDocument: 'before' },
    );
    if (before) return { job: { ...before, status: 'archived', archivedAt: now, updatedAt: now }, wasActive: before.status === 'active' };
    const current = await this.get(projectId, jobId);
    return current ? { job: current, wasActive: false } : null;
  }
}
