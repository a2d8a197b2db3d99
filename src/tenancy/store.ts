import type { Db } from 'mongodb';
import { AppError } from '../errors';

export interface OrgDoc {
  _id: string;
  createdAt: Date;
}

/** A project: the repository agent jobs work on, and the documentation domain its assistant answers for. */
export interface ProjectDoc {
  _id: string;
  orgId: string;
  /** A git URL, or owner/name on the configured GitHub. */
  repository: string;
  /** The base ref jobs start from. */
  ref: string;
  /** The documentation domain, unique across projects. */
  domain?: string;
  /** Browser origins allowed to call the assistant with this project's public key. */
  allowedOrigins: string[];
  createdAt: Date;
}

export const idPattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}

export class TenancyStore {
  constructor(private readonly db: Db) {}

  private get orgs() {
    return this.db.collection<OrgDoc>('orgs');
  }

  private get projects() {
    return this.db.collection<ProjectDoc>('projects');
  }

  async createOrg(orgId: string): Promise<OrgDoc> {
    if (!idPattern.test(orgId)) throw new AppError('invalid_argument', `organization id "${orgId}" must be 1-64 letters, digits, _ . or -`);
    const doc = { _id: orgId, createdAt: new Date() };
    try {
      await this.orgs.insertOne(doc);
    } catch (err) {
      if (isDuplicateKey(err)) throw new AppError('already_exists', `organization ${orgId} already exists`);
      throw err;
    }
    return doc;
  }

  async createProject(p: Omit<ProjectDoc, 'createdAt' | 'allowedOrigins'> & { allowedOrigins?: string[] }): Promise<ProjectDoc> {
    if (!idPattern.test(p._id)) throw new AppError('invalid_argument', `project id "${p._id}" must be 1-64 letters, digits, _ . or -`);
    if (!(await this.orgs.findOne({ _id: p.orgId }))) throw new AppError('not_found', `organization ${p.orgId} not found`);
    const doc: ProjectDoc = { ...p, allowedOrigins: p.allowedOrigins ?? [], createdAt: new Date() };
    try {
      await this.projects.insertOne(doc);
    } catch (err) {
      if (isDuplicateKey(err)) throw new AppError('already_exists', `project ${p._id} or domain ${p.domain} already exists`);
      throw err;
    }
    return doc;
  }

  getProject(projectId: string): Promise<ProjectDoc | null> {
    return this.projects.findOne({ _id: projectId });
  }

  getProjectByDomain(domain: string): Promise<ProjectDoc | null> {
    return this.projects.findOne({ domain });
  }
}
