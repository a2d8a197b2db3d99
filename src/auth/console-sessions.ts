import { createHash, randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';

/** What a console session token looks like; it is only ever sent as the console's cookie (src/console/session-cookie.ts). */
export const sessionPrefix = 'docent_sess_';
export const isSessionToken = (token: string): boolean => token.startsWith(sessionPrefix);

/** How long a console session lasts from sign-in; it is not extended by use. */
export const sessionHours = 12;

interface SessionDoc {
  /** The SHA-256 of the token: a reader of the database cannot use it. */
  _id: string;
  /** The id of the key signed in with, never the key: the key's own checks (revoked, expired) still apply. */
  keyId: string;
  createdAt: Date;
  expiresAt: Date;
}

// Tokens carry 256 random bits, so an unsalted hash is enough, as for API keys.
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** The CSRF token of a session: derived from the session token, so nothing more is stored and it dies with the session. */
export const csrfTokenOf = (token: string): string => createHash('sha256').update(`csrf:${token}`).digest('base64url');

export async function ensureConsoleSessionIndexes(db: Db): Promise<void> {
  const sessions = db.collection<SessionDoc>('console_sessions');
  await sessions.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 }).catch(() => sessions.createIndex({ expiresAt: 1 }));
}

/** The console's sign-in sessions: the only module that reads or writes their collection. */
export class ConsoleSessionStore {
  private lastSweep = 0;

  constructor(private readonly db: Db) {}

  private get sessions() {
    return this.db.collection<SessionDoc>('console_sessions');
  }

  /** A new session for a verified key; the token is returned once, to be set as the cookie. */
  async create(keyId: string): Promise<{ token: string; expiresAt: Date }> {
    const token = sessionPrefix + randomBytes(32).toString('base64url');
    const now = new Date();
    const expiresAt = new Date(now.getTime() + sessionHours * 3_600_000);
    await this.sessions.insertOne({ _id: hashToken(token), keyId, createdAt: now, expiresAt });
    // Where the server has no TTL index (FerretDB 1.x), sign-ins remove expired sessions, at most once a minute.
    if (now.getTime() - this.lastSweep > 60_000) {
      this.lastSweep = now.getTime();
      await this.sessions.deleteMany({ expiresAt: { $lte: now } });
    }
    return { token, expiresAt };
  }

  /** The session of a token, if it exists and has not expired (the TTL index removes it later). */
  async find(token: string): Promise<{ keyId: string; expiresAt: Date } | null> {
    const doc = await this.sessions.findOne({ _id: hashToken(token), expiresAt: { $gt: new Date() } });
    return doc && { keyId: doc.keyId, expiresAt: doc.expiresAt };
  }

  /** Signs out: the token stops working at once on every gateway. */
  async delete(token: string): Promise<void> {
    await this.sessions.deleteOne({ _id: hashToken(token) });
  }
}
