import { hkdfSync, randomBytes } from 'node:crypto';
import { Webhooks } from '@octokit/webhooks';
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

/**
 * Whether `signature` (X-Hub-Signature-256) signs `body` under `secret`, checked by @octokit/webhooks (its methods
 * package is ESM-only without a require entry, so it is reached through the bundled class).
 */
export async function signatureMatches(secret: string, body: string, signature: string): Promise<boolean> {
  return new Webhooks({ secret }).verify(body, signature).catch(() => false);
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

  /** Forgets the project's secret (the project is being deleted): its repository's deliveries no longer verify as it. */
  async remove(projectId: string): Promise<void> {
    await this.secrets.deleteOne({ _id: projectId });
  }

  /** The project on `repository` whose secret signed `body`, or null: only those projects' secrets are tried. */
  async verify(repository: string, body: string, signature: string): Promise<VerifiedBy | null> {
    if (!this.key) return null;
    for (const c of await this.secrets.find({ repository }).limit(100).toArray()) {
      if (await signatureMatches(this.derive(c._id, c.salt), body, signature)) return { projectId: c._id };
    }
    return null;
  }
}
