import { randomInt } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '../store/mongo';

export type Period = 'hour' | 'day' | 'month';

/** A calendar window in UTC: the hour, the day or the month a moment falls in. */
export function windowOf(period: Period, now: Date): { id: string; end: Date } {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  const h = now.getUTCHours();
  const iso = now.toISOString();
  if (period === 'hour') return { id: iso.slice(0, 13), end: new Date(Date.UTC(y, m, d, h + 1)) };
  if (period === 'day') return { id: iso.slice(0, 10), end: new Date(Date.UTC(y, m, d + 1)) };
  return { id: iso.slice(0, 7), end: new Date(Date.UTC(y, m + 1, 1)) };
}

/** What a client is told about a limit: RateLimit-Limit, -Remaining and -Reset (seconds until the window ends). */
export interface LimitState {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export type Taken = { ok: true; slotId: string; state: LimitState } | { ok: false; state: LimitState };

interface SlotDoc {
  _id: string;
  bucket: string;
  slot: number;
  expiresAt: Date;
}

export const slotCollection = 'rate_limit_slots';

/** Creates the indexes the counters use; the TTL index is skipped where the server lacks TTL (FerretDB 1.x). */
export async function ensureLimitIndexes(db: Db): Promise<void> {
  const slots = db.collection(slotCollection);
  await slots.createIndex({ bucket: 1 });
  await slots.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }).catch(() => slots.createIndex({ expiresAt: 1 }));
}


/**
 * A fixed-window counter in which each unit used is one document with a unique `_id` (bucket + slot number 0..limit-1).
 * Only inserts decide who gets a unit, because a unique-key insert is the one write FerretDB 1.24 applies atomically
 * (its $inc and conditional updates lose writes under concurrency; see docs/decisions-tenancy.md). Giving a unit back
 * deletes its document.
 */
export class FixedWindowCounter {
  private readonly slots: Collection<SlotDoc>;

  constructor(
    db: Db,
    readonly name: string,
    readonly limit: number,
    readonly period: Period,
  ) {
    this.slots = db.collection<SlotDoc>(slotCollection);
  }

  async take(subject: string, now = new Date()): Promise<Taken> {
    const window = windowOf(this.period, now);
    const bucket = `${this.name}|${encodeURIComponent(subject)}|${window.id}`;
    const state = (used: number): LimitState => ({
      limit: this.limit,
      remaining: Math.max(0, this.limit - used),
      resetSeconds: Math.max(1, Math.ceil((window.end.getTime() - now.getTime()) / 1000)),
    });
    let used = await this.slots.countDocuments({ bucket });
    let candidate: number | undefined = used < this.limit ? used : undefined;
    // Each failed insert means another request took that slot; the loop ends when a slot is won or none is free.
    while (candidate !== undefined) {
      try {
        await this.slots.insertOne({ _id: `${bucket}#${candidate}`, bucket, slot: candidate, expiresAt: window.end });
        // The first unit of a window is the moment to sweep older windows where TTL indexes do not exist.
        if (candidate === 0) await this.slots.deleteMany({ expiresAt: { $lte: now } });
        return { ok: true, slotId: `${bucket}#${candidate}`, state: state(used + 1) };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const taken = new Set((await this.slots.find({ bucket }, { projection: { slot: 1 } }).toArray()).map((d) => d.slot));
      used = taken.size;
      const free: number[] = [];
      for (let i = 0; i < this.limit && free.length < 64; i++) if (!taken.has(i)) free.push(i);
      // A random free slot keeps concurrent requests from all retrying the same one.
      candidate = free.length ? free[randomInt(free.length)] : undefined;
    }
    return { ok: false, state: state(this.limit) };
  }

  async giveBack(slotId: string): Promise<void> {
    await this.slots.deleteOne({ _id: slotId });
  }
}
