import type { Db } from 'mongodb';
import { isPreviewDomain } from '../../workflows/docs-gap-check-contract';
import { AppError } from '../errors';
import { isAllowHostPattern } from '../sandbox/egress/allow-rules';
import { isDuplicateKey } from '../store/duplicate-key';
import type { ProjectChecks } from '../../workflows/agent-job-contract';
import { LookupCache } from './lookup-cache';
import { checkWithinOperator, operatorCeiling, type OperatorSetting, type OperatorSettings, type SettingsLevel } from './settings-levels';

export interface OrgDoc {
  _id: string;
  createdAt: Date;
}

/** A project: the repository agent jobs work on, and the documentation domain its assistant answers for. */
/** What a project works on: its repository (and the connection it resolved through), base ref and documentation domain. */
export type ProjectSource = Partial<Pick<ProjectDoc, 'repository' | 'forgeId' | 'ref' | 'domain'>>;

export interface ProjectDoc {
  _id: string;
  orgId: string;
  /** A git URL, or owner/name on the forge of `forgeId`. */
  repository: string;
  /** The forge connection the repository resolved through (src/forges/repository-gate.ts); absent: named before connections, the deployment's. */
  forgeId?: string;
  /** The base ref jobs start from. */
  ref: string;
  /** The documentation domain, unique across projects. */
  domain?: string;
  /** Browser origins allowed to call the assistant with this project's public key. */
  allowedOrigins: string[];
  /** Sandboxed commands run before the agent starts (e.g. `npm ci`). */
  setupCommands?: string[];
  /** Sandboxed commands that must pass after the agent's edit (e.g. `npm test`). */
  checkCommands?: string[];
  /** Whether sandboxed commands may use the network (default: none). */
  sandboxNetwork?: boolean;
  /** With network on: the only hosts sandboxed commands may reach (`--allow-host`); absent: any public host. */
  sandboxAllowHosts?: string[];
  /** Whether check commands get the project's secrets too (`--secret-to-checks on`); setup commands always do. */
  secretsToChecks?: boolean;
  /** Whether setup (and checks, with secretsToChecks) get the secrets in turns that start from commits the agent made (`--secrets-on-agent-code on`). */
  secretsForAgentCode?: boolean;
  /** Files whose contents key the worker's setup cache (`--cache-key`); none: setup is not cached. */
  setupCacheKeyFiles?: string[];
  /** Run after a cached setup is restored, instead of setup (`--maintenance`). */
  maintenanceCommands?: string[];
  /** Bumped by `docent project cache clear`: workers ignore, then evict, entries of older generations. */
  setupCacheGeneration?: number;
  /** Caps on agent turns (docs/agent-jobs.md, "Caps"); a turn that reaches one fails with budget_exceeded. */
  maxTurnTokens?: number;
  maxTurnMinutes?: number;
  maxJobCostUsd?: number;
  /** The project's share of the agent workers against other projects' (`--fairness-weight`, src/jobs/fairness.ts); absent: 1. */
  fairnessWeight?: number;
  /**
   * The operator's values of the settings a project admin may only tighten (src/tenancy/settings-levels.ts); the
   * fields above are what is in force, which an admin may have set tighter.
   */
  operatorSettings?: OperatorSettings;
  /** Bumped by every settings change, so a change checked against one version is never written over another. */
  settingsVersion?: number;
  createdAt: Date;
}

/** One setting a change moved, for the audit log: the values before and after (commands as they are, never a secret). */
export interface SettingChange {
  old: unknown;
  new: unknown;
}

/** What `docent project update` changes; a list given replaces the stored one. */
export interface ProjectChecksUpdate {
  setup?: string[];
  check?: string[];
  clearChecks?: boolean;
  network?: boolean;
  /** Replaces the project's allowed hosts; an empty list allows any public host again. */
  allowHosts?: string[];
  secretsToChecks?: boolean;
  secretsForAgentCode?: boolean;
  /** Replaces the setup cache's key files; an empty list turns the cache off for the project. */
  cacheKeys?: string[];
  maintenance?: string[];
  /** A cap of 0 removes it. */
  caps?: { maxTurnTokens?: number; maxTurnMinutes?: number; maxJobCostUsd?: number };
  /** Within fairnessWeightRange; the default weight removes the setting. */
  fairnessWeight?: number;
  /** Replaces the origins whose pages may call the project's assistant from a browser; an empty list allows none. */
  allowedOrigins?: string[];
}

const maxCommands = 20;
const maxCommandLength = 4096;

export const idPattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

// An http(s) git URL or owner/name on the configured GitHub; ssh, git:// and file:// would bypass the token's
// scoping and the outbound address checks (src/git/access.ts).
const repositoryShape = /^(?:https?:\/\/\S+|[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)$/;
const refShape = /^(?!.*\.\.)(?!\/)[A-Za-z0-9_./-]{1,200}(?<![/.])$/;
const domainShape = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** `https://docs.acme.dev` as browsers send it in Origin; anything with a path, query or other scheme is refused. */
export function normalizeOrigin(origin: string): string {
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.origin !== origin.replace(/\/$/, '').toLowerCase()) {
    throw new AppError('invalid_argument', `allowed origin "${origin}" must be scheme://host[:port], e.g. https://docs.acme.dev`);
  }
  return url.origin;
}

/** A repository as a project, a job or a follow may name it: an http(s) git URL or owner/name, nothing else. */
export function checkRepositoryShape(repository: string): void {
  if (!repositoryShape.test(repository)) throw new AppError('invalid_argument', `repository "${repository}" must be an https git URL or owner/name`);
  // `..` would climb out of owner/ in a forge API path or a folder made from the name (context clones, URLs built from it).
  if (climbs(repository)) throw new AppError('invalid_argument', `repository "${repository}" must not contain "..": name an owner and a repository`);
}

/** Whether owner/name holds `..` (or is `.` on either side), or a URL's path has a `.` or `..` segment in any spelling (`%2e`). */
function climbs(repository: string): boolean {
  if (!/^https?:\/\//i.test(repository)) return repository.includes('..') || repository.split('/').includes('.');
  const path = repository.replace(/^https?:\/\/[^/]*/i, '').split(/[?#]/)[0] ?? '';
  return path.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
}

function checkProject(p: { repository: string; ref: string; domain?: string }): void {
  checkRepositoryShape(p.repository);
  if (!refShape.test(p.ref)) throw new AppError('invalid_argument', `ref "${p.ref}" is not a valid branch name`);
  if (p.domain !== undefined && !domainShape.test(p.domain)) throw new AppError('invalid_argument', `domain "${p.domain}" must be a lowercase host name such as docs.acme.dev`);
  if (p.domain !== undefined && isPreviewDomain(p.domain)) throw new AppError('invalid_argument', `domain "${p.domain}" is reserved for gap-check previews`);
}

const maxKeyFiles = 20;
// A path in the repository: no climbing out, no .git, nothing git's revision syntax would read differently.
const keyFileShape = /^(?!\/)(?!.*(?:^|\/)\.\.?(?:\/|$))(?!.*(?:^|\/)\.git(?:\/|$))[A-Za-z0-9_.@+/-]{1,200}$/i;

function checkKeyFiles(files: string[]): string[] {
  const list = [...new Set(files.map((f) => f.trim()).filter((f) => f !== ''))];
  if (list.length > maxKeyFiles) throw new AppError('invalid_argument', `--cache-key takes at most ${maxKeyFiles} files`);
  const bad = list.find((f) => !keyFileShape.test(f));
  if (bad !== undefined) throw new AppError('invalid_argument', `--cache-key ${JSON.stringify(bad)} must be a file path inside the repository, e.g. package-lock.json`);
  return list;
}

function checkCommands(flag: string, commands: string[]): string[] {
  if (commands.length > maxCommands) throw new AppError('invalid_argument', `at most ${maxCommands} ${flag} commands`);
  for (const c of commands) {
    if (c.trim() === '' || c.length > maxCommandLength || c.includes('\0')) throw new AppError('invalid_argument', `each ${flag} command must be 1-${maxCommandLength} characters`);
  }
  return commands;
}

/** A project's share of the agent workers when its operator set none (src/jobs/fairness.ts): every project alike. */
export const defaultFairnessWeight = 1;
/** The weights `project update --fairness-weight` accepts: inside Temporal's own [0.001, 1000], far from either end. */
export const fairnessWeightRange = { min: 0.1, max: 100 } as const;

/** The project's caps on a turn, as it holds them now (unset ones absent). */
export function projectCaps(p: ProjectDoc): { maxTurnTokens?: number; maxTurnMinutes?: number; maxJobCostUsd?: number } {
  const caps: Record<string, number> = {};
  for (const k of ['maxTurnTokens', 'maxTurnMinutes', 'maxJobCostUsd'] as const) if (p[k] !== undefined) caps[k] = p[k];
  return caps;
}

/** The commands a job's turn runs in the sandbox, as the project holds them now. */
export function projectChecks(p: ProjectDoc): ProjectChecks {
  const hosts = p.sandboxAllowHosts ?? [];
  const keyFiles = p.setupCacheKeyFiles ?? [];
  const setupCache = { project: p._id, keyFiles, generation: p.setupCacheGeneration ?? 0, maintenance: p.maintenanceCommands ?? [] };
  return {
    setup: p.setupCommands ?? [],
    check: p.checkCommands ?? [],
    network: p.sandboxNetwork ?? false,
    ...(hosts.length ? { allowHosts: hosts } : {}),
    ...(p.secretsToChecks ? { secretsToChecks: true } : {}),
    ...(p.secretsForAgentCode ? { secretsForAgentCode: true } : {}),
    ...(keyFiles.length ? { setupCache } : {}),
  };
}

const maxAllowHosts = 100;

function checkAllowHosts(hosts: string[]): string[] {
  const list = [...new Set(hosts.map((h) => h.trim().toLowerCase()))];
  if (list.length > maxAllowHosts) throw new AppError('invalid_argument', `--allow-host takes at most ${maxAllowHosts} hosts`);
  const bad = list.find((h) => !isAllowHostPattern(h));
  if (bad !== undefined) throw new AppError('invalid_argument', `--allow-host ${JSON.stringify(bad)} is not a host name or *.domain pattern`);
  return list;
}

/** What a settings change writes: `$set` and `$unset`, each value checked as the flags' help says. */
function settingsWrite(update: ProjectChecksUpdate): { set: Partial<ProjectDoc>; unset: Record<string, ''> } {
  const set: Partial<ProjectDoc> = {};
  if (update.clearChecks) Object.assign(set, { setupCommands: [], checkCommands: [], maintenanceCommands: [] });
  if (update.maintenance) set.maintenanceCommands = checkCommands('--maintenance', update.maintenance);
  if (update.setup) set.setupCommands = checkCommands('--setup', update.setup);
  if (update.check) set.checkCommands = checkCommands('--check', update.check);
  if (update.network !== undefined) set.sandboxNetwork = update.network;
  if (update.secretsToChecks !== undefined) set.secretsToChecks = update.secretsToChecks;
  if (update.secretsForAgentCode !== undefined) set.secretsForAgentCode = update.secretsForAgentCode;
  const unset: Record<string, ''> = {};
  if (update.cacheKeys?.length) set.setupCacheKeyFiles = checkKeyFiles(update.cacheKeys);
  else if (update.cacheKeys) unset.setupCacheKeyFiles = '';
  if (update.allowHosts?.length) set.sandboxAllowHosts = checkAllowHosts(update.allowHosts);
  else if (update.allowHosts) unset.sandboxAllowHosts = '';
  for (const [k, v] of Object.entries(update.caps ?? {}) as Array<[keyof NonNullable<ProjectChecksUpdate['caps']>, number | undefined]>) {
    if (v === undefined) continue;
    if (!Number.isFinite(v) || v < 0) throw new AppError('invalid_argument', `${k} must be a number of at least 0 (0 removes the cap)`);
    if (v === 0) unset[k] = '';
    else set[k] = v;
  }
  if (update.allowedOrigins) set.allowedOrigins = [...new Set(update.allowedOrigins.map(normalizeOrigin))];
  if (update.fairnessWeight !== undefined) {
    const w = update.fairnessWeight;
    const { min, max } = fairnessWeightRange;
    if (!Number.isFinite(w) || w < min || w > max)
      throw new AppError('invalid_argument', `fairnessWeight must be a number from ${min} to ${max} (${defaultFairnessWeight} is every project's default)`);
    if (w === defaultFairnessWeight) unset.fairnessWeight = '';
    else set.fairnessWeight = w;
  }
  return { set, unset };
}

const capNames = ['maxTurnTokens', 'maxTurnMinutes', 'maxJobCostUsd'] as const;
const flagNames = ['sandboxNetwork', 'secretsToChecks', 'secretsForAgentCode'] as const;

/** The operator's settings a write gives, as settings-levels.ts compares them (no cap: null; any host: []; weight 1). */
function operatorValues(set: Partial<ProjectDoc>, unset: Record<string, ''>): Partial<Record<OperatorSetting, number | null | boolean | string[]>> {
  const out: Partial<Record<OperatorSetting, number | null | boolean | string[]>> = {};
  for (const k of flagNames) if (set[k] !== undefined) out[k] = set[k];
  for (const k of capNames) if (set[k] !== undefined || k in unset) out[k] = set[k] ?? null;
  if (set.sandboxAllowHosts || 'sandboxAllowHosts' in unset) out.sandboxAllowHosts = set.sandboxAllowHosts ?? [];
  if (set.fairnessWeight !== undefined || 'fairnessWeight' in unset) out.fairnessWeight = set.fairnessWeight ?? defaultFairnessWeight;
  return out;
}

function inForceValue(p: ProjectDoc, k: OperatorSetting): unknown {
  if (k === 'fairnessWeight') return p.fairnessWeight ?? defaultFairnessWeight;
  if (k === 'sandboxAllowHosts') return p.sandboxAllowHosts ?? [];
  if ((capNames as readonly string[]).includes(k)) return p[k] ?? null;
  return p[k] ?? false;
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(Array.isArray(a) ? [...a].sort() : a) === JSON.stringify(Array.isArray(b) ? [...b].sort() : b);

/** The settings a change can move, by their stored names. */
const settingFields = [
  'setupCommands',
  'checkCommands',
  'maintenanceCommands',
  'sandboxNetwork',
  'sandboxAllowHosts',
  'secretsToChecks',
  'secretsForAgentCode',
  'setupCacheKeyFiles',
  ...capNames,
  'fairnessWeight',
  'allowedOrigins',
] as const;

/** Each setting whose stored value differs after the change: its value before and after (absent: null). */
function settingChanges(before: ProjectDoc, after: ProjectDoc): Record<string, SettingChange> {
  const changes: Record<string, SettingChange> = {};
  for (const f of settingFields) {
    if (JSON.stringify(before[f] ?? null) !== JSON.stringify(after[f] ?? null)) changes[f] = { old: before[f] ?? null, new: after[f] ?? null };
  }
  return changes;
}

export interface TenancyStoreOptions {
  /** Milliseconds a project or allowed-origin answer may be reused (0: read every time). */
  cacheMs?: number;
}

const found = (p: ProjectDoc | null) => p !== null;

export async function ensureTenancyIndexes(db: Db): Promise<void> {
  // Sparse, so projects without a documentation domain do not collide (FerretDB has no partial indexes).
  await db.collection('projects').createIndex({ domain: 1 }, { unique: true, sparse: true });
}

export class TenancyStore {
  // Only what exists is kept, so a project created elsewhere is found at once and unknown names cannot evict known ones.
  private readonly byId: LookupCache<string, ProjectDoc | null>;
  private readonly byDomain: LookupCache<string, ProjectDoc | null>;
  private readonly allowingOrigin: LookupCache<string, boolean>;

  constructor(
    private readonly db: Db,
    options: TenancyStoreOptions = {},
  ) {
    const ms = options.cacheMs ?? 0;
    this.byId = new LookupCache(ms, found);
    this.byDomain = new LookupCache(ms, found);
    this.allowingOrigin = new LookupCache(ms, (allowed) => allowed);
  }

  /** This process changed a project: its next reads must not be served from before the change. */
  private forgetProjects(): void {
    this.byId.clear();
    this.byDomain.clear();
    this.allowingOrigin.clear();
  }

  private get orgs() {
    return this.db.collection<OrgDoc>('orgs');
  }

  private get projects() {
    return this.db.collection<ProjectDoc>('projects');
  }

  /** Organizations by id, at most `limit`. */
  async listOrgs(limit: number, only?: string): Promise<OrgDoc[]> {
    return this.orgs
      .find(only === undefined ? {} : { _id: only })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
  }

  /** Projects by id, of one organization or of all, at most `limit`. */
  async listProjects(limit: number, orgId?: string): Promise<ProjectDoc[]> {
    return this.projects
      .find(orgId === undefined ? {} : { orgId })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
  }

  async hasOrg(orgId: string): Promise<boolean> {
    return (await this.orgs.findOne({ _id: orgId }, { projection: { _id: 1 } })) !== null;
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
    checkProject(p);
    const allowedOrigins = [...new Set((p.allowedOrigins ?? []).map(normalizeOrigin))];
    if (!(await this.orgs.findOne({ _id: p.orgId }))) throw new AppError('not_found', `organization ${p.orgId} not found`);
    const doc: ProjectDoc = { ...p, allowedOrigins, createdAt: new Date() };
    try {
      await this.projects.insertOne(doc);
    } catch (err) {
      if (isDuplicateKey(err)) throw new AppError('already_exists', `project ${p._id} or domain ${p.domain} already exists`);
      throw err;
    }
    this.forgetProjects();
    return doc;
  }

  /** The project's repository, now reached through another connection of its organization (the gate chose it); false when there is no such project. */
  async moveToForge(projectId: string, forgeId: string): Promise<boolean> {
    const done = await this.projects.updateOne({ _id: projectId }, { $set: { forgeId } });
    this.forgetProjects();
    return done.matchedCount === 1;
  }

  /**
   * Points the project at another repository (through `forgeId`, which the gate chose), base ref or documentation
   * domain; returns the project before and after. A domain another project serves is already_exists.
   */
  async updateSource(projectId: string, source: ProjectSource): Promise<{ before: ProjectDoc; after: ProjectDoc }> {
    const before = await this.projects.findOne({ _id: projectId });
    if (!before) throw new AppError('not_found', `project ${projectId} not found`);
    checkProject({ repository: source.repository ?? before.repository, ref: source.ref ?? before.ref, domain: source.domain ?? before.domain });
    const set = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined));
    const taken = () => new AppError('already_exists', `another project serves the domain ${source.domain}`);
    // Asked first for a clear answer; the unique index still decides a race (FerretDB's findAndModify does not say which error, updateOne does).
    if (source.domain !== undefined && (await this.projects.findOne({ domain: source.domain, _id: { $ne: projectId } }, { projection: { _id: 1 } }))) throw taken();
    try {
      await this.projects.updateOne({ _id: projectId }, { $set: set });
    } catch (err) {
      throw isDuplicateKey(err) ? taken() : err;
    } finally {
      this.forgetProjects();
    }
    const after = await this.projects.findOne({ _id: projectId });
    if (!after) throw new AppError('not_found', `project ${projectId} not found`);
    return { before, after };
  }

  /** Removes the project's document: the last step of deleting it (src/admin/project-deletion.ts removes what it owns first). */
  async removeProject(projectId: string): Promise<boolean> {
    const done = await this.projects.deleteOne({ _id: projectId });
    this.forgetProjects();
    return done.deletedCount === 1;
  }

  /** Removes the organization unless a project is still in it (checked again here, so a project made meanwhile keeps it). */
  async removeOrg(orgId: string): Promise<boolean> {
    if (await this.projects.findOne({ orgId }, { projection: { _id: 1 } })) throw new AppError('failed_precondition', `organization ${orgId} still has projects: delete them first`);
    return (await this.orgs.deleteOne({ _id: orgId })).deletedCount === 1;
  }

  /** The operator's change of a project's settings (the CLI on the database, tests): returns the project as stored. */
  async updateChecks(projectId: string, update: ProjectChecksUpdate): Promise<ProjectDoc> {
    return (await this.updateSettings(projectId, update, 'operator')).project;
  }

  /**
   * Changes a project's sandbox settings at the caller's level: a project admin's value for an operator's setting
   * must be no wider than the operator's (src/tenancy/settings-levels.ts). Returns the project as stored and the
   * settings the change moved. Written only if no other change came in between (else read and checked again).
   */
  async updateSettings(projectId: string, update: ProjectChecksUpdate, level: SettingsLevel): Promise<{ project: ProjectDoc; changes: Record<string, SettingChange> }> {
    const { set, unset } = settingsWrite(update);
    const given = operatorValues(set, unset);
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = await this.projects.findOne({ _id: projectId });
      if (!before) throw new AppError('not_found', `project ${projectId} not found`);
      const ceiling = operatorCeiling(before);
      // An admin's request may restate a value in force (a form sends every field): only a change is checked.
      const moved = Object.fromEntries(Object.entries(given).filter(([k, v]) => !sameValue(inForceValue(before, k as OperatorSetting), v)));
      checkWithinOperator(level, ceiling, moved);
      // The operator's values are written down on every change, so an admin's tightening never moves them.
      const operatorSettings: OperatorSettings = { ...ceiling, ...(level === 'operator' ? (given as OperatorSettings) : {}) };
      const version = before.settingsVersion;
      const updated = await this.projects.findOneAndUpdate(
        { _id: projectId, settingsVersion: version === undefined ? { $exists: false } : version },
        { $set: { ...set, operatorSettings, settingsVersion: (version ?? 0) + 1 }, ...(Object.keys(unset).length ? { $unset: unset } : {}) },
        { returnDocument: 'after' },
      );
      this.forgetProjects();
      if (updated) return { project: updated, changes: settingChanges(before, updated) };
    }
    throw new AppError('aborted', `project ${projectId} was changed by several others at once; try again`);
  }

  /**
   * Empties the project's setup cache on every worker at once: the generation in the key moves on, so entries stored
   * before never match again and are evicted as workers store new ones. Returns the new generation.
   */
  async clearSetupCache(projectId: string): Promise<number> {
    const updated = await this.projects.findOneAndUpdate({ _id: projectId }, { $inc: { setupCacheGeneration: 1 } }, { returnDocument: 'after' });
    this.forgetProjects();
    if (!updated) throw new AppError('not_found', `project ${projectId} not found`);
    return updated.setupCacheGeneration ?? 1;
  }

  /** The project, possibly as read up to `cacheMs` ago; callers must not change the returned document. */
  getProject(projectId: string): Promise<ProjectDoc | null> {
    return this.byId.get(projectId, () => this.projects.findOne({ _id: projectId }));
  }

  /** The project serving a documentation domain, possibly as read up to `cacheMs` ago; not to be changed. */
  getProjectByDomain(domain: string): Promise<ProjectDoc | null> {
    return this.byDomain.get(domain, () => this.projects.findOne({ domain }));
  }

  /**
   * The projects whose repository is `owner/name` (GitHub's spelling, any case), as owner/name or as a git URL ending in
   * it; the caller confirms each with resolveRepository, since a URL's host is not compared here.
   */
  projectsNamingRepository(fullName: string): Promise<ProjectDoc[]> {
    const escaped = fullName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return this.projects
      .find({ repository: { $regex: `(^|/)${escaped}(\\.git)?/?$`, $options: 'i' } })
      .limit(500)
      .toArray();
  }

  /** Whether any project lists the origin among its allowed origins. */
  anyProjectAllows(origin: string): Promise<boolean> {
    return this.allowingOrigin.get(origin, async () => (await this.projects.findOne({ allowedOrigins: origin }, { projection: { _id: 1 } })) !== null);
  }
}
