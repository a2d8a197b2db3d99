import type { Db } from 'mongodb';
import { SecretBox } from '../crypto/secret-box';
import { AppError } from '../errors';

/** One project secret as stored: the value sealed with DOCENT_SECRET_KEY, never in clear. */
interface ProjectSecretDoc {
  _id: string;
  projectId: string;
  name: string;
  sealed: string;
  updatedAt: Date;
}

export interface ProjectSecretInfo {
  name: string;
  updatedAt: Date;
}

export const maxSecretsPerProject = 32;
export const maxSecretBytes = 16 * 1024;
/** Shorter values would be redacted wherever their letters happen to occur in command output. */
export const minSecretLength = 8;

const namePattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
// Set by the sandbox itself, routing egress, or steering the dynamic linker: a secret must not replace them.
const reservedNames = new Set(['PATH', 'HOME', 'LANG', 'TMPDIR', 'CI', 'PWD', 'SHELL', 'USER', 'BASH_ENV', 'ENV']);
const reservedShapes = [/^LD_/, /PROXY$/i, /^DOCENT_/];

/** Environment-variable names only, and none the sandbox or the proxy set themselves. */
export function checkSecretName(name: string): string {
  if (!namePattern.test(name)) throw new AppError('invalid_argument', `secret name "${name}" must be an environment variable name: a letter or _, then letters, digits or _ (at most 64)`);
  if (reservedNames.has(name) || reservedShapes.some((shape) => shape.test(name))) throw new AppError('invalid_argument', `secret name ${name} is reserved: the sandbox sets it itself`);
  return name;
}

function checkSecretValue(name: string, value: string): void {
  if (value.length < minSecretLength) throw new AppError('invalid_argument', `secret ${name} must be at least ${minSecretLength} characters, so its redaction cannot hide ordinary output`);
  if (Buffer.byteLength(value) > maxSecretBytes) throw new AppError('invalid_argument', `secret ${name} must be at most ${maxSecretBytes} bytes`);
  if (value.includes('\0')) throw new AppError('invalid_argument', `secret ${name} must not contain NUL bytes`);
}

const secretId = (projectId: string, name: string) => `${projectId}/${name}`;
/** What a sealed value is bound to: opened under another project or name, it fails. */
const sealContext = (projectId: string, name: string) => `project-secret:${JSON.stringify([projectId, name])}`;

/** Secrets a project's setup commands receive as environment variables (`docent project secret set`). */
export class ProjectSecretStore {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox | undefined,
  ) {}

  private get secrets() {
    return this.db.collection<ProjectSecretDoc>('project_secrets');
  }

  private sealer(): SecretBox {
    if (!this.box) throw new AppError('failed_precondition', 'project secrets are off: the operator must set DOCENT_SECRET_KEY (32 bytes, base64) to store them');
    return this.box;
  }

  /** Stores or replaces one secret; at most `maxSecretsPerProject` per project. */
  async set(projectId: string, name: string, value: string): Promise<ProjectSecretInfo> {
    const box = this.sealer();
    checkSecretName(name);
    checkSecretValue(name, value);
    const exists = await this.secrets.countDocuments({ _id: secretId(projectId, name) });
    if (!exists && (await this.secrets.countDocuments({ projectId })) >= maxSecretsPerProject) {
      throw new AppError('resource_exhausted', `project ${projectId} already has ${maxSecretsPerProject} secrets; delete one first`);
    }
    const updatedAt = new Date();
    await this.secrets.updateOne({ _id: secretId(projectId, name) }, { $set: { projectId, name, sealed: box.seal(value, sealContext(projectId, name)), updatedAt } }, { upsert: true });
    return { name, updatedAt };
  }

  /** Deletes every secret of a project being deleted, with or without DOCENT_SECRET_KEY; returns their names. */
  async removeAllOf(projectId: string): Promise<string[]> {
    const names = (await this.secrets.find({ projectId }, { projection: { name: 1 } }).toArray()).map((d) => d.name);
    await this.secrets.deleteMany({ projectId });
    return names;
  }

  /** Names and when each was set, never values. */
  async list(projectId: string): Promise<ProjectSecretInfo[]> {
    this.sealer();
    const docs = await this.secrets
      .find({ projectId }, { projection: { name: 1, updatedAt: 1 } })
      .sort({ name: 1 })
      .toArray();
    return docs.map((d) => ({ name: d.name, updatedAt: d.updatedAt }));
  }

  async remove(projectId: string, name: string): Promise<boolean> {
    this.sealer();
    return (await this.secrets.deleteOne({ _id: secretId(projectId, name) })).deletedCount === 1;
  }

  /**
   * The project's secrets in clear, read at the moment a turn needs them; empty when it has none. A value sealed
   * before values were bound to their project and name is opened once more the old way and sealed again, bound.
   */
  async open(projectId: string): Promise<Record<string, string>> {
    const docs = await this.secrets.find({ projectId }).toArray();
    if (docs.length === 0) return {};
    const box = this.sealer();
    const opened = async (d: ProjectSecretDoc) => {
      const context = sealContext(d.projectId, d.name);
      let value: string;
      try {
        value = box.open(d.sealed, context);
      } catch {
        throw new AppError(
          'failed_precondition',
          `secret ${d.name} does not open with this DOCENT_SECRET_KEY for project ${projectId} (sealed with another key, or copied from elsewhere); set it again`,
        );
      }
      if (SecretBox.unbound(d.sealed)) await this.secrets.updateOne({ _id: d._id, sealed: d.sealed }, { $set: { sealed: box.seal(value, context) } });
      return [d.name, value] as const;
    };
    return Object.fromEntries(await Promise.all(docs.map(opened)));
  }
}
