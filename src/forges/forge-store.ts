import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import type { SecretBox } from '../crypto/secret-box';
import { AppError } from '../errors';
import { isDuplicateKey } from '../store/duplicate-key';
import type { ForgeConnection, ForgeCredential, ForgeKind } from './forge-connection';

/** A connection as stored: the token and the webhook secret sealed with DOCENT_SECRET_KEY, bound to the connection's id. */
interface ForgeConnectionDoc {
  _id: string;
  orgId: string;
  kind: ForgeKind;
  apiUrl: string;
  gitUrl: string;
  credential: { type: 'token'; sealed: string } | { type: 'app'; installationId?: number };
  /** `<apiUrl> <installationId>` of an App installation: unique, so one installation belongs to one organization. */
  installationClaim?: string;
  webhookSecret: string;
  createdAt: Date;
}

const collection = 'forge_connections';
/** An organization's connections are few (one per forge account); a cap keeps a lookup's work bounded. */
export const maxConnectionsPerOrg = 20;

export async function ensureForgeIndexes(db: Db): Promise<void> {
  await db.collection(collection).createIndex({ orgId: 1, createdAt: 1 });
  await db.collection(collection).createIndex({ installationClaim: 1 }, { unique: true, sparse: true });
}

/** What adding a connection takes; the webhook secret is made here. */
export interface NewForgeConnection {
  orgId: string;
  kind: ForgeKind;
  apiUrl: string;
  gitUrl: string;
  credential: ForgeCredential;
}

/** The one owner of forge connection records: it seals on the way in and opens on the way out. */
export class ForgeStore {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox | undefined,
  ) {}

  private get docs() {
    return this.db.collection<ForgeConnectionDoc>(collection);
  }

  private sealer(): SecretBox {
    if (!this.box) throw new AppError('failed_precondition', 'forge connections need DOCENT_SECRET_KEY (32 bytes, base64) to seal their credentials');
    return this.box;
  }

  /** Adds a connection; answers it with its new webhook secret, which is never shown again. An installation claimed before is 409. */
  async add(c: NewForgeConnection): Promise<ForgeConnection> {
    const box = this.sealer();
    if ((await this.docs.countDocuments({ orgId: c.orgId })) >= maxConnectionsPerOrg) {
      throw new AppError('resource_exhausted', `organization ${c.orgId} has ${maxConnectionsPerOrg} forge connections, the most it may have`);
    }
    const id = `forge_${randomBytes(8).toString('hex')}`;
    const webhookSecret = randomBytes(24).toString('base64url');
    const credential =
      c.credential.type === 'token' ? { type: 'token' as const, sealed: box.seal(c.credential.token, `forge:${id}:token`) } : { type: 'app' as const, installationId: c.credential.installationId };
    const doc: ForgeConnectionDoc = {
      _id: id,
      orgId: c.orgId,
      kind: c.kind,
      apiUrl: c.apiUrl,
      gitUrl: c.gitUrl,
      credential,
      ...(c.credential.type === 'app' ? { installationClaim: `${c.apiUrl} ${c.credential.installationId}` } : {}),
      webhookSecret: box.seal(webhookSecret, `forge:${id}:webhook`),
      createdAt: new Date(),
    };
    try {
      await this.docs.insertOne(doc);
    } catch (err) {
      if (isDuplicateKey(err)) throw new AppError('already_exists', `the GitHub App installation ${(c.credential as { installationId: number }).installationId} is already claimed by an organization`);
      throw err;
    }
    return { ...this.open(doc), webhookSecret };
  }

  /** The organization's connections, oldest first: the order a repository name is resolved in. */
  async list(orgId: string): Promise<ForgeConnection[]> {
    const docs = await this.docs.find({ orgId }).sort({ createdAt: 1, _id: 1 }).limit(maxConnectionsPerOrg).toArray();
    return docs.map((d) => this.open(d));
  }

  async get(id: string): Promise<ForgeConnection | null> {
    const doc = await this.docs.findOne({ _id: id });
    return doc ? this.open(doc) : null;
  }

  /** Removes the organization's connection; false when it has none of that id. */
  async remove(orgId: string, id: string): Promise<boolean> {
    return (await this.docs.deleteOne({ _id: id, orgId })).deletedCount === 1;
  }

  /** A new webhook secret for the organization's connection, replacing the old one at once; null when there is no such connection. */
  async rotateWebhookSecret(orgId: string, id: string): Promise<string | null> {
    const box = this.sealer();
    const webhookSecret = randomBytes(24).toString('base64url');
    const done = await this.docs.updateOne({ _id: id, orgId }, { $set: { webhookSecret: box.seal(webhookSecret, `forge:${id}:webhook`) } });
    return done.matchedCount === 1 ? webhookSecret : null;
  }

  private open(d: ForgeConnectionDoc): ForgeConnection {
    const box = this.sealer();
    const credential: ForgeCredential = d.credential.type === 'token' ? { type: 'token', token: box.open(d.credential.sealed, `forge:${d._id}:token`) } : d.credential;
    return { id: d._id, orgId: d.orgId, kind: d.kind, apiUrl: d.apiUrl, gitUrl: d.gitUrl, credential, webhookSecret: box.open(d.webhookSecret, `forge:${d._id}:webhook`), createdAt: d.createdAt };
  }
}
