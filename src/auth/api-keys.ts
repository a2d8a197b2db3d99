import { createHash, randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { AppError } from '../errors';
import { LookupCache } from '../tenancy/lookup-cache';
import { ConsoleSessionStore, isSessionToken } from './console-sessions';
import { checkKeyRestrictions, type KeyRestrictions, type KeyScope, restrictionsOf } from './key-use';

export type KeyKind = 'admin' | 'assistant';
/** Every kind stored: operator keys administer organizations (all, or one) and are never project callers. */
export type StoredKeyKind = KeyKind | 'operator';

const prefixOf: Record<StoredKeyKind, string> = { admin: 'docent_admin_', assistant: 'docent_asst_', operator: 'docent_op_' };

/** The orgId an operator key for every organization is stored with: not a valid organization id (store.ts idPattern). */
export const allOrganizations = '*';

/** Who is calling with an operator key: `orgId` absent means every organization. */
export interface OperatorCaller {
  keyId: string;
  kind: 'operator';
  orgId?: string;
}

/** Who is calling: what a verified key is bound to. */
export interface Caller {
  keyId: string;
  kind: KeyKind;
  orgId: string;
  projectId?: string;
  domain?: string;
  /** Assistant keys only: the groups whose restricted pages (front matter `groups`) the key may see. */
  groups?: string[];
  /** Where and for what the key may be used (src/auth/key-use.ts checks each request against it). */
  restrictions?: KeyRestrictions;
}

interface ApiKeyDoc {
  _id: string;
  hash: string;
  kind: StoredKeyKind;
  orgId: string;
  projectId?: string;
  domain?: string;
  groups?: string[];
  /** The key whose caller made this one through the operator API (absent: made by the operator on the database). */
  createdBy?: string;
  createdAt: Date;
  lastUsedAt?: Date;
  revokedAt?: Date;
  expiresAt?: Date;
  /** Addresses and networks the key may be used from; absent: anywhere. */
  allowedIps?: string[];
  /** Admin keys: `read` may only read (GET, and Connect's Get/List/Watch methods); absent or `write`: everything. */
  scope?: KeyScope;
}

// Keys carry 256 random bits, so a fast unsalted hash is enough to make the stored value useless to a reader.
const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');

export interface NewKey {
  kind: StoredKeyKind;
  orgId: string;
  projectId?: string;
  domain?: string;
  groups?: string[];
  expiresAt?: Date;
  allowedIps?: string[];
  scope?: KeyScope;
  /** The id of the key that made it (revoking that one revokes this one too, unless asked not to). */
  createdBy?: string;
}

const maxGroups = 20;
/** The most keys one revocation follows down the keys made with it: far more than any project has. */
const maxMintedRevoked = 10_000;
// Group names as docs front matter writes them: a word or a short phrase, no commas (the CLI splits on them).
const groupShape = /^[^\s,\p{Cc}](?:[^,\p{Cc}]{0,98}[^\s,\p{Cc}])?$/u;

/** The groups an assistant key is allowed, checked and without repeats; admin keys have none. */
function checkGroups(kind: StoredKeyKind, groups: string[] | undefined): string[] | undefined {
  if (!groups?.length) return undefined;
  if (kind !== 'assistant') throw new AppError('invalid_argument', 'only assistant keys have groups');
  const unique = [...new Set(groups)];
  if (unique.length > maxGroups) throw new AppError('invalid_argument', `a key may have at most ${maxGroups} groups`);
  const bad = unique.find((g) => !groupShape.test(g));
  if (bad !== undefined) throw new AppError('invalid_argument', `group "${bad.slice(0, 120)}" must be 1-100 characters without commas or surrounding spaces`);
  return unique;
}

export interface ApiKeyStoreOptions {
  /** Milliseconds a key read from the database may be reused (0: read on every request). */
  cacheMs?: number;
}

/** What may be shown about a key: never the key, never its hash. */
export type KeyInfo = Omit<ApiKeyDoc, '_id' | 'hash'> & { id: string };

export async function ensureApiKeyIndexes(db: Db): Promise<void> {
  await db.collection('api_keys').createIndex({ hash: 1 }, { unique: true });
  await db.collection('api_keys').createIndex({ projectId: 1 });
  // Sparse: keys the operator made on the database have no maker.
  await db.collection('api_keys').createIndex({ createdBy: 1 }, { sparse: true });
}

export class ApiKeyStore {
  // Keyed by the key's SHA-256, the same value the database is searched by, so a cached entry answers exactly the
  // key it was read for. Unknown keys are not kept: a stream of wrong keys cannot push the real ones out.
  private readonly byHash: LookupCache<string, ApiKeyDoc | null>;
  /** A console session stands for the key it was made from (src/console/session-cookie.ts sends it as the credential). */
  private readonly sessions: ConsoleSessionStore;

  constructor(
    private readonly db: Db,
    options: ApiKeyStoreOptions = {},
  ) {
    this.byHash = new LookupCache(options.cacheMs ?? 0, (doc) => doc !== null);
    this.sessions = new ConsoleSessionStore(db);
  }

  private get keys() {
    return this.db.collection<ApiKeyDoc>('api_keys');
  }

  /** Stores only the key's hash and returns the key itself, which is never seen again. */
  async create(spec: NewKey): Promise<{ id: string; key: string }> {
    const key = prefixOf[spec.kind] + randomBytes(32).toString('base64url');
    const id = 'key_' + randomBytes(8).toString('hex');
    const { groups: asked, ...binding } = spec;
    const groups = checkGroups(spec.kind, asked);
    checkKeyRestrictions(spec);
    await this.keys.insertOne({ _id: id, hash: hashKey(key), createdAt: new Date(), ...binding, ...(groups && { groups }) });
    return { id, key };
  }

  /** The keys of a project, newest first. */
  async list(filter: { projectId: string }): Promise<KeyInfo[]> {
    const docs = await this.keys
      .find({ projectId: filter.projectId }, { projection: { hash: 0 } })
      .sort({ createdAt: -1 })
      .toArray();
    return docs.map((d) => ({
      id: d._id,
      kind: d.kind,
      orgId: d.orgId,
      ...(d.projectId !== undefined && { projectId: d.projectId }),
      ...(d.domain !== undefined && { domain: d.domain }),
      ...(d.groups?.length && { groups: d.groups }),
      ...(d.createdBy !== undefined && { createdBy: d.createdBy }),
      createdAt: d.createdAt,
      ...(d.lastUsedAt && { lastUsedAt: d.lastUsedAt }),
      ...(d.revokedAt && { revokedAt: d.revokedAt }),
      ...(d.expiresAt && { expiresAt: d.expiresAt }),
      ...(d.allowedIps?.length && { allowedIps: d.allowedIps }),
      ...(d.scope && { scope: d.scope }),
    }));
  }

  /** The project's assistant keys serve its new documentation domain (the project moved to it); returns how many. */
  async moveToDomain(projectId: string, domain: string): Promise<number> {
    const r = await this.keys.updateMany({ projectId, kind: 'assistant' }, { $set: { domain } });
    this.byHash.clear();
    return r.modifiedCount;
  }

  /** Revokes every active key of the project (it is being deleted); returns their ids. */
  async revokeAllOf(projectId: string): Promise<string[]> {
    const active = await this.keys.find({ projectId, revokedAt: { $exists: false } }, { projection: { _id: 1 } }).toArray();
    for (const { _id } of active) await this.revoke(_id);
    return active.map((k) => k._id);
  }

  /** Revokes every active operator key of one organization (it is being deleted); returns their ids. */
  async revokeOperatorKeysOf(orgId: string): Promise<string[]> {
    const active = await this.keys.find({ orgId, kind: 'operator', revokedAt: { $exists: false } }, { projection: { _id: 1 } }).toArray();
    for (const { _id } of active) await this.revoke(_id);
    return active.map((k) => k._id);
  }

  async revoke(id: string): Promise<boolean> {
    const r = await this.keys.updateOne({ _id: id, revokedAt: { $exists: false } }, { $set: { revokedAt: new Date() } });
    this.byHash.clear(); // revoked here: at once in this process; other processes see it within their cache bound
    return r.modifiedCount === 1;
  }

  /**
   * Revokes a key and every key made with it, and with those, down the line (a key minted by a key never outlives it);
   * `keepMinted` revokes the key alone. Returns the ids revoked, the key's first; undefined if it was not active.
   */
  async revokeWithMinted(id: string, opts: { keepMinted?: boolean } = {}): Promise<string[] | undefined> {
    if (!(await this.revoke(id))) return undefined;
    const revoked = [id];
    if (opts.keepMinted) return revoked;
    // Every descendant, revoked ones too: a key revoked alone earlier may have minted keys still active.
    const seen = new Set(revoked);
    let frontier = [id];
    while (frontier.length && seen.size < maxMintedRevoked) {
      const minted = await this.keys.find({ createdBy: { $in: frontier } }, { projection: { _id: 1, revokedAt: 1 } }).toArray();
      frontier = minted.map((k) => k._id).filter((k) => !seen.has(k));
      for (const k of frontier) seen.add(k);
      const active = minted.filter((k) => !k.revokedAt && frontier.includes(k._id)).map((k) => k._id);
      if (active.length) await this.keys.updateMany({ _id: { $in: active }, revokedAt: { $exists: false } }, { $set: { revokedAt: new Date() } });
      revoked.push(...active);
    }
    this.byHash.clear();
    return revoked;
  }

  /** Whether a key authenticated earlier still works (not revoked, not expired): long streams ask this as they run. */
  async isUsable(keyId: string): Promise<boolean> {
    const doc = await this.keys.findOne({ _id: keyId }, { projection: { revokedAt: 1, expiresAt: 1 } });
    return !!doc && !doc.revokedAt && !(doc.expiresAt && doc.expiresAt <= new Date());
  }

  /** Resolves an Authorization header to its caller, or throws 401/403 without saying more than needed. */
  async authenticate(authorization: string | null | undefined, kind: KeyKind): Promise<Caller> {
    const doc = await this.verify(authorization, kind);
    const restrictions = restrictionsOf(doc);
    return { keyId: doc._id, kind, orgId: doc.orgId, projectId: doc.projectId, domain: doc.domain, ...(doc.groups?.length && { groups: [...doc.groups] }), ...(restrictions && { restrictions }) };
  }

  /** Resolves an operator key (`docent_op_…`) to its scope, or throws 401/403. */
  async authenticateOperator(authorization: string | null | undefined): Promise<OperatorCaller> {
    const doc = await this.verify(authorization, 'operator');
    return { keyId: doc._id, kind: 'operator', ...(doc.orgId !== allOrganizations && { orgId: doc.orgId }) };
  }

  /** Resolves an operator key or a project's admin key (the operator API's callers); any other kind is 403. */
  async authenticateAdminOrOperator(authorization: string | null | undefined): Promise<OperatorCaller | Caller> {
    const doc = await this.verify(authorization, (kind) => kind === 'admin' || kind === 'operator', 'admin');
    if (doc.kind === 'operator') return { keyId: doc._id, kind: 'operator', ...(doc.orgId !== allOrganizations && { orgId: doc.orgId }) };
    const restrictions = restrictionsOf(doc);
    return { keyId: doc._id, kind: 'admin', orgId: doc.orgId, projectId: doc.projectId, domain: doc.domain, ...(restrictions && { restrictions }) };
  }

  /** The key a console session was made from: never cached, so a signed-out session stops at once. */
  private async keyOfSession(token: string): Promise<ApiKeyDoc> {
    const session = await this.sessions.find(token);
    const doc = session && (await this.keys.findOne({ _id: session.keyId }));
    if (!doc) throw new AppError('unauthenticated', 'the console session has ended: sign in again');
    return doc;
  }

  private async verify(authorization: string | null | undefined, kind: StoredKeyKind | ((k: StoredKeyKind) => boolean), named: StoredKeyKind = kind as StoredKeyKind): Promise<ApiKeyDoc> {
    const match = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(authorization?.trim() ?? '');
    if (!match) throw new AppError('unauthenticated', 'missing or malformed Authorization header: expected "Bearer <key>"');
    const key = match[1]!;
    const hash = hashKey(key);
    const doc = isSessionToken(key) ? await this.keyOfSession(key) : await this.byHash.get(hash, () => this.keys.findOne({ hash }));
    const now = new Date();
    if (!doc || doc.revokedAt || (doc.expiresAt && doc.expiresAt <= now)) {
      throw new AppError('unauthenticated', 'invalid, revoked or expired API key');
    }
    if (typeof kind === 'function' ? !kind(doc.kind) : doc.kind !== kind) throw new AppError('permission_denied', `this endpoint needs an ${named} key`);
    // lastUsedAt is kept to the minute so that a busy key does not cost a write per request.
    if (!doc.lastUsedAt || now.getTime() - doc.lastUsedAt.getTime() > 60_000) {
      doc.lastUsedAt = now; // the cached copy too, so requests sharing it do not all write
      await this.keys.updateOne({ _id: doc._id }, { $set: { lastUsedAt: now } });
    }
    return doc;
  }
}
