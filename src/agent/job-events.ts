import type { Db } from 'mongodb';
import { isDuplicateKey } from '../store/mongo';

/** What a job's event stream carries (README "Job events"); `step` names a tool and a path, never file contents. */
export type JobEventType = 'status' | 'turn.started' | 'step' | 'check' | 'commit' | 'pull_request' | 'turn.finished';

export interface JobEventDoc {
  _id: string;
  jobId: string;
  /** 1, 2, 3, … per job, in the order the events were stored: the SSE id a client resumes after. */
  seq: number;
  /** Unique per job: a retried writer (an activity attempt, a repeated request) stores its event once. */
  key: string;
  type: JobEventType;
  turn: number;
  at: Date;
  data: Record<string, unknown>;
}

export interface JobEvent {
  id: number;
  type: JobEventType;
  turn: number;
  at: string;
  data: Record<string, unknown>;
}

export const eventToJson = (e: JobEventDoc): JobEvent => ({ id: e.seq, type: e.type, turn: e.turn, at: e.at.toISOString(), data: e.data });

export async function ensureJobEventIndexes(db: Db): Promise<void> {
  await db.collection('job_events').createIndex({ jobId: 1, seq: 1 }, { unique: true });
  await db.collection('job_events').createIndex({ jobId: 1, key: 1 }, { unique: true });
}

/**
 * A job's events, appended with ids that only grow. An append takes the next id after the last one stored and
 * retries on a clash, so an id becomes visible only after every smaller one: a reader resuming after N misses nothing.
 */
export class JobEventStore {
  constructor(private readonly db: Db) {}

  private get events() {
    return this.db.collection<JobEventDoc>('job_events');
  }

  /** Stores the event once per `key`; returns its id (also when an earlier attempt stored it). */
  async append(jobId: string, e: { key: string; type: JobEventType; turn: number; data: Record<string, unknown> }): Promise<number> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const existing = await this.events.findOne({ jobId, key: e.key }, { projection: { seq: 1 } });
      if (existing) return existing.seq;
      const last = await this.events
        .find({ jobId }, { projection: { seq: 1 } })
        .sort({ seq: -1 })
        .limit(1)
        .next();
      const seq = (last?.seq ?? 0) + 1;
      try {
        await this.events.insertOne({ _id: `${jobId}:${seq}`, jobId, seq, key: e.key, type: e.type, turn: e.turn, at: new Date(), data: e.data });
        return seq;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    }
    throw new Error(`could not store an event of job ${jobId}: too many concurrent writers`);
  }

  /** Events with an id above `after`, oldest first. */
  after(jobId: string, after: number, limit = 500): Promise<JobEventDoc[]> {
    return this.events
      .find({ jobId, seq: { $gt: after } })
      .sort({ seq: 1 })
      .limit(limit)
      .toArray();
  }
}
