import type { Db } from 'mongodb';
import { ipLimitSubject } from '../limits/ip-subject';

/** Failed console sign-ins are counted in windows of this length, per client address and per key prefix. */
export const signInWindowMs = 15 * 60_000;
const collection = 'console_sign_in_failures';

interface FailureDoc {
  _id: string;
  count: number;
  expiresAt: Date;
}

export async function ensureSignInLimitIndexes(db: Db): Promise<void> {
  const failures = db.collection(collection);
  // FerretDB may not expire documents; a window's count is read only while the window lasts either way.
  await failures.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }).catch(() => failures.createIndex({ expiresAt: 1 }));
}

/** What one failed key guess is counted under: its kind's prefix and the first characters after it. */
export const keyPrefixOf = (key: string) => (/^docent_[a-z]+_/.exec(key)?.[0] ?? '') + key.replace(/^docent_[a-z]+_/, '').slice(0, 4);

/**
 * Failed console sign-ins (src/console/session-routes.ts): after `limit` in a window from one address (an IPv6 /64
 * counts as one) or for one key prefix, sign-ins are refused until the window ends, key or no key, so guesses cannot
 * flood the audit log or the key lookups. Counts live in the database: every gateway replica sees the same.
 */
export class ConsoleSignInLimits {
  constructor(
    private readonly db: Db,
    private readonly limit: number,
  ) {}

  private subjects(ip: string | undefined, key: string, now: Date) {
    const window = Math.floor(now.getTime() / signInWindowMs);
    return { window, ids: [...(ip ? [`ip:${ipLimitSubject(ip)}:${window}`] : []), `key:${keyPrefixOf(key)}:${window}`] };
  }

  /** Seconds until sign-ins from here or with this prefix are taken again; null while under the limit. */
  async refusedFor(ip: string | undefined, key: string, now = new Date()): Promise<number | null> {
    const { window, ids } = this.subjects(ip, key, now);
    const full = await this.db
      .collection<FailureDoc>(collection)
      .find({ _id: { $in: ids }, count: { $gte: this.limit } })
      .limit(1)
      .toArray();
    return full.length ? Math.max(1, Math.ceil(((window + 1) * signInWindowMs - now.getTime()) / 1000)) : null;
  }

  /** Counts a failed sign-in; true when it is the window's first from this address (the one the audit log records). */
  async failed(ip: string | undefined, key: string, now = new Date()): Promise<boolean> {
    const { window, ids } = this.subjects(ip, key, now);
    const expiresAt = new Date((window + 1) * signInWindowMs);
    const counts = await Promise.all(
      ids.map((id) => this.db.collection<FailureDoc>(collection).findOneAndUpdate({ _id: id }, { $inc: { count: 1 }, $set: { expiresAt } }, { upsert: true, returnDocument: 'after' })),
    );
    return (counts[0]?.count ?? 1) === 1;
  }
}
