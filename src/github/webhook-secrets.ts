import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from 'mongodb';
import { AppError } from '../errors';

/**
 * Token mode: each project's own webhook secret for its repository (`docent project webhook-secret`). Only a random
 * salt is stored; the secret is derived from DOCENT_SECRET_KEY with HKDF over the salt and the project id, so the
 * database alone never yields it and a new salt (a new command run) replaces it.
 */
interface ProjectWebhookSecretDoc {
  /** The project id. */
  _id: string;
  /** `owner/name`, lower-cased: deliveries about this repository are verified with this project's secret. */
  repository: string;
  salt: string;
  createdAt: Date;
}

/** The project whose secret verified a delivery. */
export interface VerifiedBy {
  projectId: string;
}

const collection = 'github_webhook_secrets';

export async function ensureWebhookSecretIndexes(db: Db): Promise<void> {
  await db.collection(collection).createIndex({ repository: 1 });
}

/** Whether `signature` (X-Hub-Signature-256) is `sha256=` HMAC-SHA256 of `body` under `secret`, compared in constant time. */
export function signatureMatches(secret: string, body: string, signature: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export class ProjectWebhookSecrets {
  constructor(
    private readonly db: Db,
    private readonly key: Buffer | undefined,
  ) {}

  private get secrets() {
    return this.db.collection<ProjectWebhookSecretDoc>(collection);
  }

  private derive(projectId: string, salt: string): string {
    if (!this.key) throw new AppError('failed_precondition', 'project webhook secrets need DOCENT_SECRET_KEY (32 bytes, base64)');
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.from(salt, 'base64url'), `docent github webhook secret\0${projectId}`, 32)).toString('base64url');
  }

  /** A new secret for the project's repository, replacing the old one; the caller shows it once. */
  async issue(projectId: string, repository: string): Promise<string> {
    const salt = randomBytes(16).toString('base64url');
    const secret = this.derive(projectId, salt);
    await this.secrets.updateOne({ _id: projectId }, { $set: { repository, salt, createdAt: new Date() } }, { upsert: true });
    return secret;
  }

  /** The project on `repository` whose secret signed `body`, or null: only those projects' secrets are tried. */
  async verify(repository: string, body: string, signature: string): Promise<VerifiedBy | null> {
    if (!this.key) return null;
    const candidates = await this.secrets.find({ repository }).limit(100).toArray();
    const match = candidates.find((c) => signatureMatches(this.derive(c._id, c.salt), body, signature));
    return match ? { projectId: match._id } : null;
  }
}
