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

/** How many windows' next-slot hints a process keeps; beyond that the oldest is forgotten (and recounted if needed). */
const maxHints = 10_000;
/** Collisions in a row (other replicas taking the same slots) before falling back to reading the window's slots. */
const maxProbes = 8;

/**
 * A fixed-window counter in which each unit used is one document with a unique `_id` (bucket + slot number 0..limit-1).
 * Only inserts decide who gets a unit, because a unique-key insert is the one write FerretDB 1.24 applies atomically
 * (its $inc and conditional updates lose writes under concurrency; see docs/decisions-tenancy.md). Giving a unit back
 * deletes its document.
 */
export class FixedWindowCounter {
  private readonly slots: Collection<SlotDoc>;
  /**
   * bucket → the slot this process will try next: the common path is one insert, with no count or scan. A hint of
   * `limit` means the window is full, and the process refuses from memory until the window (and so the bucket) ends.
   */
  private readonly nextSlot = new Map<string, number>();

  constructor(
    db: Db,
    readonly name: string,
    readonly limit: number,
    readonly period: Period,
  ) {
    this.slots = db.collection<SlotDoc>(slotCollection);
  }

  private remember(bucket: string, slot: number): void {
    this.nextSlot.delete(bucket); // re-inserted last, so the map's order is least recently used first
    this.nextSlot.set(bucket, slot);
    if (this.nextSlot.size > maxHints) this.nextSlot.delete(this.nextSlot.keys().next().value!);
  }

  /** Tries to insert one slot document; true when this request won it. */
  private async claim(bucket: string, slot: number, end: Date): Promise<boolean> {
    try {
      await this.slots.insertOne({ _id: `${bucket}#${slot}`, bucket, slot, expiresAt: end });
      return true;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return false;
    }
  }

  private bucketOf(subject: string, now: Date) {
    const window = windowOf(this.period, now);
    const bucket = `${this.name}|${encodeURIComponent(subject)}|${window.id}`;
    const state = (used: number): LimitState => ({
      limit: this.limit,
      remaining: Math.max(0, this.limit - used),
      resetSeconds: Math.max(1, Math.ceil((window.end.getTime() - now.getTime()) / 1000)),
    });
    return { window, bucket, state };
  }

  /** The refusal, when this process already saw the subject's window full; reads nothing. */
  knownFull(subject: string, now = new Date()): LimitState | undefined {
    const { bucket, state } = this.bucketOf(subject, now);
    return (this.nextSlot.get(bucket) ?? 0) >= this.limit ? state(this.limit) : undefined;
  }

  async take(subject: string, now = new Date()): Promise<Taken> {
    const { window, bucket, state } = this.bucketOf(subject, now);
    const won = async (slot: number, used: number): Promise<Taken> => {
      this.remember(bucket, slot + 1);
      // The first unit of a window is the moment to sweep older windows where TTL indexes do not exist.
      if (slot === 0) await this.slots.deleteMany({ expiresAt: { $lte: now } });
      return { ok: true, slotId: `${bucket}#${slot}`, state: state(used) };
    };

    // A full window stays full until it ends, unless this process gives a unit back (see giveBack): no read at all.
    // Units given back by other replicas are not seen here; refusing them is the safe side of a limit.
    const hint = this.nextSlot.get(bucket);
    if (hint !== undefined && hint >= this.limit) return { ok: false, state: state(this.limit) };

    // Fast path: the next slot after the last one this process won, probing forward past slots other replicas took.
    let candidate = hint ?? (await this.slots.countDocuments({ bucket }));
    for (let probe = 0; probe < maxProbes && candidate < this.limit; probe++, candidate++) {
      if (await this.claim(bucket, candidate, window.end)) return won(candidate, candidate + 1);
    }

    // Slow path (near the limit, or heavy contention): read the window's slots and try the free ones, which
    // includes holes left by units given back.
    for (;;) {
      const taken = new Set((await this.slots.find({ bucket }, { projection: { slot: 1 } }).toArray()).map((d) => d.slot));
      const free: number[] = [];
      for (let i = 0; i < this.limit && free.length < 64; i++) if (!taken.has(i)) free.push(i);
      if (free.length === 0) {
        this.remember(bucket, this.limit);
        return { ok: false, state: state(this.limit) };
      }
      // A random free slot keeps concurrent requests from all retrying the same one.
      const slot = free[randomInt(free.length)]!;
      if (await this.claim(bucket, slot, window.end)) return won(slot, taken.size + 1);
    }
  }

  async giveBack(slotId: string): Promise<void> {
    await this.slots.deleteOne({ _id: slotId });
    // The freed slot is the next one this process tries, so a hole is reused before the window counts as full.
    const hash = slotId.lastIndexOf('#');
    const bucket = slotId.slice(0, hash);
    const slot = Number(slotId.slice(hash + 1));
    const hint = this.nextSlot.get(bucket);
    if (hint !== undefined && slot < hint) this.remember(bucket, slot);
  }
}
