import type { Db } from 'mongodb';
import { isDuplicateKey } from '../store/duplicate-key';
import { eventKeys } from './event-keys';
import { firstTurnOf, impliedFirstTurnOf, type FirstTurnSource } from './first-turn';

/** What a job's event stream carries (docs/agent-jobs.md, "Events"); `step` names a tool and a path, never file contents. */
export type JobEventType = 'status' | 'turn.started' | 'step' | 'check' | 'egress' | 'commit' | 'pull_request' | 'turn.finished' | 'plan.ready' | 'plan.revision' | 'plan.approved';

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

/** How many jobs' next-id hints a process keeps; a forgotten one is found again with a few `_id` lookups. */
const maxHints = 10_000;

type NewEvent = { key: string; type: JobEventType; turn: number; data: Record<string, unknown> };

/** The events that open a turn's attempt, in this order: the instruction, then the job active again. */
export function turnOpening(turn: number, prompt: string, attempt = 1): NewEvent[] {
  return [
    { key: eventKeys.turnStarted(turn, attempt), type: 'turn.started', turn, data: { prompt, attempt } },
    { key: eventKeys.status(turn, 'active', attempt), type: 'status', turn, data: { status: 'active' } },
  ];
}

const eventId = (jobId: string, seq: number) => `${jobId}:${seq}`;

/** The opening events a job implies, as they are stored once a writer stores them. */
function openingOf(job: FirstTurnSource): JobEventDoc[] {
  const first = firstTurnOf(job);
  return turnOpening(1, first.prompt).map((e, i) => ({ _id: eventId(job._id, i + 1), jobId: job._id, seq: i + 1, at: job.createdAt, ...e }));
}

/**
 * A job's events, appended with ids that only grow. An append takes the next id after the last one stored and
 * retries on a clash, so ids form a prefix 1..N with no holes. Every read on the common path is by `_id`: FerretDB
 * uses no other index for queries, so a query by `jobId` would read every job's events (docs/decisions/2026-11-21-tenancy-and-limits.md).
 */
export class JobEventStore {
  /** jobId → the next id to try: one insert per append, with no read, while this process knows the job. */
  private readonly nextSeq = new Map<string, number>();

  constructor(private readonly db: Db) {}

  private get events() {
    return this.db.collection<JobEventDoc>('job_events');
  }

  private remember(jobId: string, next: number): void {
    this.nextSeq.delete(jobId); // re-inserted last: least recently used first
    this.nextSeq.set(jobId, next);
    if (this.nextSeq.size > maxHints) this.nextSeq.delete(this.nextSeq.keys().next().value!);
  }

  /** The first free id of a job, found by `_id` lookups (doubling, then halving), since ids have no holes. */
  private async firstFree(jobId: string): Promise<number> {
    const taken = async (seq: number) => (await this.events.findOne({ _id: eventId(jobId, seq) }, { projection: { _id: 1 } })) !== null;
    let lo = 0; // taken (0 stands for "before the first")
    let hi = 1;
    while (await taken(hi)) {
      lo = hi;
      hi *= 2;
    }
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (await taken(mid)) lo = mid;
      else hi = mid;
    }
    return hi;
  }

  /** Stores the event once per `key`; returns its id (also when an earlier attempt stored it). */
  async append(jobId: string, e: NewEvent): Promise<number> {
    let seq = this.nextSeq.get(jobId) ?? (await this.firstFree(jobId));
    // A job with no stored event may imply its first turn's opening events: they keep ids 1 and 2.
    if (seq === 1 && (await this.storeOpening(jobId))) seq = this.nextSeq.get(jobId) ?? (await this.firstFree(jobId));
    return this.insertFrom(jobId, seq, e, new Date());
  }

  /** Stores the opening events a job implies (with the create's time, as they were shown); false when it implies none. */
  private async storeOpening(jobId: string): Promise<boolean> {
    const job = await impliedFirstTurnOf(this.db, jobId);
    if (!job) return false;
    await this.appendFirst(jobId, openingOf(job), job.createdAt);
    return true;
  }

  /** Inserts the event at `seq` or the next free id after it. */
  private async insertFrom(jobId: string, from: number, e: NewEvent, at: Date): Promise<number> {
    let seq = from;
    for (let attempt = 0; attempt < 200; attempt++, seq++) {
      try {
        await this.events.insertOne({ _id: eventId(jobId, seq), jobId, seq, key: e.key, type: e.type, turn: e.turn, at, data: e.data });
        this.remember(jobId, seq + 1);
        return seq;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      // A clash on the id (another writer took it) or on the key (an earlier attempt stored this event).
      const holder = await this.events.findOne({ _id: eventId(jobId, seq) }, { projection: { key: 1 } });
      if (holder?.key === e.key) return seq;
      if (holder) {
        seq = (await this.firstFree(jobId)) - 1; // other writers appended since this process last did: skip past them
        continue;
      }
      const stored = await this.events.findOne({ jobId, key: e.key }, { projection: { seq: 1 } }); // rare: a retried write
      if (stored) return stored.seq;
    }
    throw new Error(`could not store an event of job ${jobId}: too many concurrent writers`);
  }

  /** The first events of a job: ids 1, 2, … in one command, falling back to one insert each on any clash. */
  async appendFirst(jobId: string, events: NewEvent[], at = new Date()): Promise<void> {
    try {
      await this.events.insertMany(
        events.map((e, i) => ({ _id: eventId(jobId, i + 1), jobId, seq: i + 1, key: e.key, type: e.type, turn: e.turn, at, data: e.data })),
        { ordered: true },
      );
      this.remember(jobId, events.length + 1);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      for (const e of events) await this.insertFrom(jobId, this.nextSeq.get(jobId) ?? (await this.firstFree(jobId)), e, at);
    }
  }

  /** Events with an id above `after`, oldest first; a job's implied opening events read as if stored. */
  async after(jobId: string, after: number, limit = 500): Promise<JobEventDoc[]> {
    const stored = await this.events
      .find({ jobId, seq: { $gt: after } })
      .sort({ seq: 1 })
      .limit(limit)
      .toArray();
    // Ids have no holes, so nothing stored past `after` < 2 means the opening is not stored (whole) yet.
    if (stored.length > 0 || after >= 2) return stored;
    const job = await impliedFirstTurnOf(this.db, jobId);
    return job
      ? openingOf(job)
          .filter((e) => e.seq > after)
          .slice(0, limit)
      : stored;
  }
}
