import { randomInt } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '../store/duplicate-key';

/** The positions an unordered insertMany lost to duplicate keys; undefined when it failed for another reason. */
function duplicateIndexes(err: unknown): Set<number> | undefined {
  const writeErrors = (err as { writeErrors?: unknown }).writeErrors;
  const list = Array.isArray(writeErrors) ? (writeErrors as Array<{ code?: number; index?: number }>) : writeErrors ? [writeErrors as { code?: number; index?: number }] : [];
  if (list.length === 0 || list.some((e) => e.code !== 11000 || typeof e.index !== 'number')) return undefined;
  return new Set(list.map((e) => e.index!));
}

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
/** The next-slot hint of a window whose slots were all read as taken: refused from memory until it ends. */
const confirmedFull = Number.MAX_SAFE_INTEGER;
/** The most slots one claim takes ahead of use for a hot window. */
const maxLease = 32;
/** A lease never exceeds this share of what is left, so units won ahead and unused can strand at most 1/64 of a window. */
const leaseShare = 64;
/** A window used at least once per this time (on average over its last lease) is hot: its next lease doubles; a cooler one goes back to one slot. */
const hotMs = 1_000;

/** The most free slots kept from one read of a window, to try before reading it again. */
const maxHoles = 1_024;

/** Free slots a read of a window found (units given back, or won ahead and handed back by a replica that stopped). */
interface Holes {
  slots: number[];
  /** Free slots in the window when it was read, less those this process took since: what RateLimit-Remaining tells. */
  free: number;
}

/** Slots this process has won ahead of use for one hot window; taking one of them is a request with no round trip. */
interface Lease {
  slots: number[];
  size: number;
  claimedAt: number;
}

/**
 * A fixed-window counter in which each unit used is one document with a unique `_id` (bucket + slot number 0..limit-1).
 * Only inserts decide who gets a unit, because a unique-key insert is the one write FerretDB 1.24 applies atomically
 * (its $inc and conditional updates lose writes under concurrency; see docs/decisions/2026-11-21-tenancy-and-limits.md). Giving a unit back
 * deletes its document.
 */
export class FixedWindowCounter {
  private readonly slots: Collection<SlotDoc>;
  /**
   * bucket → the slot this process will try next: the common path is one insert, with no count or scan. A hint of
   * `confirmedFull` means every slot was read as taken, and the process refuses from memory until the window ends;
   * a hint at the limit only means probing reached the end, and the next request reads the window for holes.
   */
  private readonly nextSlot = new Map<string, number>();
  /** bucket → slots won ahead of use; only for windows whose limit is large enough that a lease is a small share. */
  private readonly leases = new Map<string, Lease>();
  /** bucket → the claim in flight for a leased window. */
  private readonly claiming = new Map<string, Promise<void>>();
  /** bucket → free slots the last read of the window found: the next requests try them before reading it again. */
  private readonly holes = new Map<string, Holes>();

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
    if (this.nextSlot.size > maxHints) {
      const oldest = this.nextSlot.keys().next().value!;
      this.nextSlot.delete(oldest);
      this.leases.delete(oldest); // its slots expire with their window, as if used
      this.holes.delete(oldest);
    }
  }

  /** The largest lease a window may hold with `from` slots used; below 2 the window takes its slots one at a time. */
  private leaseRoom(from: number): number {
    return Math.floor((this.limit - from) / leaseShare);
  }

  /** How many slots the next claim for a bucket takes: one, or double the last lease while the window stays hot. */
  private leaseSize(bucket: string, from: number, now: number): number {
    const share = this.leaseRoom(from);
    if (share < 2) return 1;
    const last = this.leases.get(bucket);
    // Measured per slot, so that a steady one request a second stays hot however large its lease has grown.
    const size = last && now - last.claimedAt < hotMs * last.size ? last.size * 2 : 1;
    return Math.min(size, maxLease, share);
  }

  /** Tries to insert slot documents from..from+count-1 in one command; returns the slots this request won. */
  private async claimRange(bucket: string, from: number, count: number, end: Date): Promise<number[]> {
    if (count === 1) return (await this.claim(bucket, from, end)) ? [from] : [];
    const docs = Array.from({ length: count }, (_, i) => ({ _id: `${bucket}#${from + i}`, bucket, slot: from + i, expiresAt: end }));
    try {
      await this.slots.insertMany(docs, { ordered: false });
      return docs.map((d) => d.slot);
    } catch (err) {
      const lost = duplicateIndexes(err);
      if (!lost) throw err;
      return docs.filter((_, i) => !lost.has(i)).map((d) => d.slot);
    }
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
    const leased = this.leases.get(bucket)?.slots.length ?? 0;
    return leased === 0 && this.nextSlot.get(bucket) === confirmedFull ? state(this.limit) : undefined;
  }

  async take(subject: string, now = new Date()): Promise<Taken> {
    const b = this.bucketOf(subject, now);
    if (this.limit < 2 * leaseShare) return this.claimFor(b, now);
    // A window large enough to lease has one claim in flight at a time: the others wait for it and take from its lease.
    for (;;) {
      const leased = this.fromLease(b.bucket, b.state);
      if (leased) {
        this.refillAhead(b);
        return leased;
      }
      const inflight = this.claiming.get(b.bucket);
      if (!inflight) break;
      await inflight;
    }
    const claim = this.claimFor(b, now);
    this.singleFlight(b.bucket, claim);
    return claim;
  }

  /** Wins a slot from the database for this request, plus a lease of more when the window is hot and roomy. */
  private async claimFor({ window, bucket, state }: ReturnType<FixedWindowCounter['bucketOf']>, now: Date): Promise<Taken> {
    const won = async (slot: number, used: number): Promise<Taken> => {
      if ((this.nextSlot.get(bucket) ?? 0) < slot + 1) this.remember(bucket, slot + 1);
      // The first unit of a window is the moment to sweep older windows where TTL indexes do not exist.
      if (slot === 0) await this.slots.deleteMany({ expiresAt: { $lte: now } });
      return { ok: true, slotId: `${bucket}#${slot}`, state: state(used) };
    };

    // A full window stays full until it ends, unless this process gives a unit back (see giveBack): no read at all.
    // Units given back by other replicas are not seen here; refusing them is the safe side of a limit.
    const hint = this.nextSlot.get(bucket);
    if (hint === confirmedFull) return { ok: false, state: state(this.limit) };

    // Probing has reached the end of the window: the holes the last read found come first. Each is one insert, and
    // one that another replica took since costs a probe.
    const holes = (hint ?? 0) >= this.limit ? this.holes.get(bucket) : undefined;
    for (let probe = 0; holes && probe < maxProbes; probe++) {
      const slot = holes.slots.shift();
      if (slot === undefined) break;
      holes.free -= 1;
      if (await this.claim(bucket, slot, window.end)) return won(slot, this.limit - holes.free);
    }
    if (holes?.slots.length === 0) this.holes.delete(bucket);

    // Fast path: the next slots after the last ones this process won, probing forward past slots other replicas took.
    // A hot window with room to spare claims several at once and keeps the rest as a lease for the next requests.
    let candidate = hint ?? (await this.slots.countDocuments({ bucket }));
    for (let probe = 0; probe < maxProbes && candidate < this.limit; probe++) {
      const clock = performance.now();
      const count = this.leaseSize(bucket, candidate, clock);
      // Concurrent requests of this process probe past this range instead of colliding with it.
      if ((this.nextSlot.get(bucket) ?? 0) < candidate + count) this.remember(bucket, candidate + count);
      const slots = await this.claimRange(bucket, candidate, count, window.end);
      candidate += count;
      if (slots.length === 0) continue;
      const [mine, ...rest] = slots as [number, ...number[]];
      if (this.limit >= 2 * leaseShare) this.addLease(bucket, rest, count, clock);
      return won(mine, candidate - rest.length);
    }

    // Slow path (near the limit, or heavy contention): read the window's slots and try the free ones, which
    // includes holes left by units given back. The rest are kept for the next requests (above).
    for (;;) {
      const taken = new Set((await this.slots.find({ bucket }, { projection: { slot: 1 } }).toArray()).map((d) => d.slot));
      const free: number[] = [];
      for (let i = 0; i < this.limit && free.length < maxHoles; i++) if (!taken.has(i)) free.push(i);
      if (free.length === 0) {
        this.holes.delete(bucket);
        this.remember(bucket, confirmedFull);
        return { ok: false, state: state(this.limit) };
      }
      // A random one of the first free slots keeps concurrent requests from all retrying the same one.
      const [slot] = free.splice(randomInt(Math.min(free.length, 64)), 1) as [number];
      // Slots from the hint up to the first free one after it are taken: the next probes start past them.
      const next = this.nextSlot.get(bucket) ?? 0;
      let past = next;
      while (past < this.limit && taken.has(past)) past++;
      if (past > next) this.remember(bucket, past);
      // Kept once probing has reached the end of the window. Before that, free slots are mostly the fast path's, which
      // claims them in batches, or slots another replica is claiming right now.
      if ((this.nextSlot.get(bucket) ?? 0) >= this.limit) this.holes.set(bucket, { slots: free, free: this.limit - taken.size - 1 });
      else this.holes.delete(bucket);
      if (await this.claim(bucket, slot, window.end)) return won(slot, taken.size + 1);
    }
  }

  /**
   * Once half of a lease is used, claims the next one in the background, so that a steady stream of requests keeps
   * taking leased slots and none waits for the database. Near the limit nothing is claimed ahead: the request path decides.
   */
  private refillAhead(b: ReturnType<FixedWindowCounter['bucketOf']>): void {
    const lease = this.leases.get(b.bucket);
    const from = this.nextSlot.get(b.bucket);
    if (!lease || lease.slots.length > lease.size / 2 || this.claiming.has(b.bucket) || from === undefined || from >= this.limit) return;
    const clock = performance.now();
    const count = this.leaseSize(b.bucket, from, clock);
    if (count < 2) return;
    // The hint moves when the slots land, so that RateLimit-Remaining never counts slots still being claimed; no other
    // claim of this window runs meanwhile (single flight), so none can take the same range.
    const claim = this.claimRange(b.bucket, from, count, b.window.end).then(
      (slots) => {
        if ((this.nextSlot.get(b.bucket) ?? 0) < from + count) this.remember(b.bucket, from + count);
        this.addLease(b.bucket, slots, count, clock);
      },
      // A failed claim ahead costs nothing: the request that finds the lease empty claims for itself and sees the error.
      () => undefined,
    );
    this.singleFlight(b.bucket, claim);
  }

  /** Makes requests for the bucket wait for this claim (settled either way) before claiming on their own. */
  private singleFlight(bucket: string, claim: Promise<unknown>): void {
    const settled = claim.then(
      () => undefined,
      () => undefined,
    );
    this.claiming.set(bucket, settled);
    void settled.then(() => {
      if (this.claiming.get(bucket) === settled) this.claiming.delete(bucket);
    });
  }

  /** One slot of the bucket's lease, if it has any left. */
  private fromLease(bucket: string, state: (used: number) => LimitState): Taken | undefined {
    const slot = this.leases.get(bucket)?.slots.shift();
    if (slot === undefined) return undefined;
    const unused = this.leases.get(bucket)!.slots.length;
    return { ok: true, slotId: `${bucket}#${slot}`, state: state((this.nextSlot.get(bucket) ?? slot + 1) - unused) };
  }

  private addLease(bucket: string, slots: number[], size: number, claimedAt: number): void {
    const lease = this.leases.get(bucket);
    this.leases.set(bucket, { slots: [...(lease?.slots ?? []), ...slots], size, claimedAt });
  }

  /** Deletes the slots this process won ahead and did not use, so that other replicas can take them (at shutdown). */
  async releaseLeases(): Promise<void> {
    await Promise.all(this.claiming.values()); // a claim ahead still in flight would otherwise add slots after this
    const ids = [...this.leases].flatMap(([bucket, lease]) => lease.slots.map((slot) => `${bucket}#${slot}`));
    this.leases.clear();
    if (ids.length) await this.slots.deleteMany({ _id: { $in: ids } });
  }

  async giveBack(slotId: string): Promise<void> {
    const hash = slotId.lastIndexOf('#');
    const bucket = slotId.slice(0, hash);
    const slot = Number(slotId.slice(hash + 1));
    // A hot window keeps the unit in its lease: the next request takes it with no round trip.
    const lease = this.leases.get(bucket);
    if (lease) {
      lease.slots.unshift(slot);
      return;
    }
    await this.slots.deleteOne({ _id: slotId });
    // The freed slot is the next one this process tries, so a hole is reused before the window counts as full.
    const hint = this.nextSlot.get(bucket);
    if (hint !== undefined && slot < hint) this.remember(bucket, slot);
  }
}
