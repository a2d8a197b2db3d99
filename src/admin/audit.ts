import { ObjectId, type Db } from 'mongodb';
import { AppError } from '../errors';
import type { AuditDetails } from './tenancy-operations';

/**
 * One operator API call: who (the key's id and kind, never the key), what, when, from where, and the status answered;
 * for a change, what it changed (settings old and new, the key made or revoked; secrets by name only).
 */
export interface AuditEntry extends AuditDetails {
  keyId?: string;
  keyKind?: 'operator' | 'admin' | 'assistant';
  method: string;
  route: string;
  targets: Record<string, string>;
  clientAddress: string;
  status: number;
}

/** A value as long as an audit entry keeps it: commands can be long, an entry stays small. */
const maxValueChars = 2000;
const bounded = (v: unknown): unknown => {
  const json = JSON.stringify(v);
  return json !== undefined && json.length > maxValueChars ? `${json.slice(0, maxValueChars)}… (${json.length} characters)` : v;
};

/** The details an operation noted, bounded for the log. */
export function auditDetails(d: AuditDetails | undefined): AuditDetails {
  if (!d) return {};
  const changes = d.changes && Object.fromEntries(Object.entries(d.changes).map(([k, c]) => [k, { old: bounded(c.old), new: bounded(c.new) }]));
  return { ...(changes && Object.keys(changes).length && { changes }), ...(d.createdKey && { createdKey: d.createdKey }), ...(d.revokedKeys && { revokedKeys: d.revokedKeys.slice(0, 200) }) };
}

interface AuditDoc extends AuditEntry {
  _id: ObjectId;
  at: Date;
  /** `at` plus the retention of the time of writing. */
  expiresAt: Date;
}

const sweepEveryMs = 60_000;

const maxLimit = 200;

/**
 * A TTL index on `expiresAt`; where the server lacks TTL (FerretDB 1.x) a plain one, and `record` sweeps. Created with
 * the other indexes at start (src/store/mongo.ts), never while routes are built: a gateway starts with MongoDB down.
 */
export async function ensureAuditIndexes(db: Db): Promise<void> {
  const entries = db.collection<AuditDoc>('admin_audit');
  await entries.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }).catch(() => entries.createIndex({ expiresAt: 1 }));
}

/** The audit log of /v2/admin: the only module that reads or writes its collection. */
export class AdminAuditLog {
  constructor(
    private readonly db: Db,
    private readonly retentionDays: number,
  ) {}

  private get entries() {
    return this.db.collection<AuditDoc>('admin_audit');
  }

  private lastSweep = 0;

  async record(entry: AuditEntry): Promise<void> {
    const at = new Date();
    await this.entries.insertOne({ _id: new ObjectId(), at, expiresAt: new Date(at.getTime() + this.retentionDays * 86_400_000), ...entry });
    if (at.getTime() - this.lastSweep > sweepEveryMs) {
      this.lastSweep = at.getTime();
      await this.entries.deleteMany({ expiresAt: { $lte: at } });
    }
  }

  /** Newest first; `cursor` is the `next` of the page before. */
  async list(limit: number, cursor?: string): Promise<{ entries: (AuditEntry & { id: string; at: Date })[]; next?: string }> {
    if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) throw new AppError('invalid_argument', `limit must be an integer from 1 to ${maxLimit}`);
    if (cursor !== undefined && !ObjectId.isValid(cursor)) throw new AppError('invalid_argument', 'cursor is not one this endpoint gave');
    const docs = await this.entries
      .find({ expiresAt: { $gt: new Date() }, ...(cursor && { _id: { $lt: new ObjectId(cursor) } }) }, { projection: { expiresAt: 0 } })
      .sort({ _id: -1 })
      .limit(limit + 1)
      .toArray();
    const page = docs.slice(0, limit);
    return {
      entries: page.map(({ _id, expiresAt: _kept, ...rest }) => ({ id: _id.toHexString(), ...rest })),
      ...(docs.length > limit && { next: page.at(-1)!._id.toHexString() }),
    };
  }
}
