import type { Client as EsClient } from '@elastic/elasticsearch';
import type { z } from 'zod';
import type { ApiKeyStore } from '../auth/api-keys';
import { AppError } from '../errors';
import { SecretBox } from '../crypto/secret-box';
import type { GitHubSettings } from '../config';
import type { Deps } from '../deps';
import { ProjectWebhookSecrets } from '../github/webhook-secrets';
import { issueWebhookSecret } from './github-operations';
import { ProjectSecretStore } from '../secrets/project-secrets';
import type { RepositoryGate } from '../forges/repository-gate';
import type { ForgeStore } from '../forges/forge-store';
import { deliveryToJson, GitHubDeliveryStore } from '../github/deliveries';
import type { TenancyStore } from '../tenancy/store';
import type { WebhookStore } from '../webhooks/store';
import { followInput } from '../docs/follow-input';
import { type DocsSyncSchedules, followDocs, followedSource, syncDocsNow, unfollowDocs } from '../docs/sync-schedule';
import { type DocsHealth, docsHealth } from '../docs/docs-health';
import { indexedPagePassages, listIndexedPages } from '../docs/indexed-pages';
import { DocsSyncRuns, type DocsSyncRun } from '../docs/sync-runs';
import { docsAlias } from '../search/docs-index';
import type { DocsSyncResult } from '../../workflows/docs-sync-contract';
import { type AdminCaller, requireAllOrgs, requireOrg, visibleDomain, visibleProject } from './access';
import type { createKeyBody, createProjectBody, createWebhookBody, followBody, projectSettingsBody, secretBody } from './admin-bodies';
import { setSecret, listSecrets } from './secret-operations';
import { type AddForgeBody, addForge, type ForgeSettings, listForges, removeForge, rotateForgeWebhookSecret } from './forge-operations';
import { type AuditDetails, clearProjectSetupCache, createKey, createOrg, createProject, moveProjectSource, revokeKey, updateProjectChecks } from './tenancy-operations';
import { deleteOrg, deleteProject } from './project-deletion';
import { createWebhook, deleteWebhook, listWebhooks, webhookDeliveries } from './webhook-operations';

export interface AdminStores {
  tenancy: TenancyStore;
  keys: ApiKeyStore;
  webhooks: WebhookStore;
  secrets: ProjectSecretStore;
  /** Temporal's docs sync schedules. */
  schedules: DocsSyncSchedules;
  githubWebhookSecrets: ProjectWebhookSecrets;
  github: GitHubSettings;
  /** Whether an organization may name a repository, and through which forge connection. */
  gate: RepositoryGate;
  /** The organizations' forge connections (src/forges/forge-store.ts). */
  forges: ForgeStore;
  /** Their webhook URLs' start and the networks their URLs may lead into. */
  forgeSettings: ForgeSettings;
  githubDeliveries: GitHubDeliveryStore;
  /** Where ingested documentation is served from, to tell whether a domain has some before a project claims it. */
  docsIndex: { es: EsClient; indexPrefix: string };
  /** Syncs started through the API, followed by their id (src/docs/sync-runs.ts). */
  docsSyncRuns: DocsSyncRuns;
  /** A deleted project's automations go with it (schedules, runs). */
  automations: { removeAllOf(projectId: string): Promise<string[]> };
  /** How many of a project's jobs are working: a project is not deleted under them. */
  activeJobs(projectId: string): Promise<number>;
}

/** The stores the operations use, from the gateway's clients (REST and Connect build them alike). */
export function adminStores(deps: Deps): AdminStores {
  const secrets = new ProjectSecretStore(deps.mongo.db, deps.config.secretKey ? new SecretBox(deps.config.secretKey) : undefined);
  const schedules = { temporal: deps.temporal, taskQueuePrefix: deps.config.temporal.taskQueuePrefix, gitBaseUrl: deps.config.github.gitUrl };
  const githubWebhookSecrets = new ProjectWebhookSecrets(deps.mongo.db, deps.config.secretKey);
  const forgeSettings = { publicUrl: deps.config.publicUrl ?? deps.config.api.url, allowPrivateNetworks: deps.config.allowPrivateNetworks };
  return {
    tenancy: deps.tenancy,
    keys: deps.keys,
    webhooks: deps.webhooks,
    secrets,
    schedules,
    githubWebhookSecrets,
    github: deps.config.github,
    gate: deps.forges.gate,
    forges: deps.forges.store,
    forgeSettings,
    githubDeliveries: new GitHubDeliveryStore(deps.mongo.db),
    docsIndex: { es: deps.es, indexPrefix: deps.config.elasticsearch.indexPrefix },
    docsSyncRuns: new DocsSyncRuns(deps.mongo.db, schedules),
    automations: deps.automations,
    activeJobs: (projectId) => deps.mongo.db.collection('jobs').countDocuments({ projectId, status: 'active' }),
  };
}

const listLimit = 500;

// The JSON of an operation (src/admin/*-operations.ts), typed for the surfaces that answer with it; what it adds to
// the audit entry goes to `note`, which the surface's audit hook reads.
type Json = Record<string, unknown>;
/** Takes what an operation adds to its audit entry (the settings it moved, the key it made or revoked). */
export type AuditNote = (details: AuditDetails) => void;
const jsonOf = async (out: Promise<{ json: unknown; audit?: AuditDetails }>, note?: AuditNote) => {
  const done = await out;
  if (done.audit) note?.(done.audit);
  return done.json as Json;
};

/**
 * The operator API's operations with their authorisation: REST (src/rest/admin-routes.ts) and Connect
 * (src/rpc/admin-handlers.ts) both call these, so the two surfaces refuse and answer alike.
 */
export class AdminOperations {
  constructor(private readonly s: AdminStores) {}

  private async project(who: AdminCaller, projectId: string): Promise<string> {
    return (await visibleProject(this.s.tenancy, who, projectId))._id;
  }

  createOrg(who: AdminCaller, id: string): Promise<Json> {
    requireAllOrgs(who);
    return jsonOf(createOrg(this.s, id));
  }

  async listOrgs(who: AdminCaller): Promise<Array<{ id: string; createdAt: Date }>> {
    if (who.kind !== 'operator') throw new AppError('permission_denied', 'this operation needs an operator key');
    return (await this.s.tenancy.listOrgs(listLimit, who.orgId)).map((o) => ({ id: o._id, createdAt: o.createdAt }));
  }

  async listProjects(who: AdminCaller, orgId?: string): Promise<Json[]> {
    if (orgId !== undefined) requireOrg(who, orgId);
    else if (who.kind !== 'operator') throw new AppError('permission_denied', 'this operation needs an operator key');
    const projects = await this.s.tenancy.listProjects(listLimit, orgId ?? (who.kind === 'operator' ? who.orgId : undefined));
    return projects.map(({ _id, ...p }) => ({ id: _id, ...p }));
  }

  async createProject(who: AdminCaller, b: z.infer<typeof createProjectBody>): Promise<Json> {
    requireOrg(who, b.orgId);
    if (!(who.kind === 'operator' && who.orgId === undefined)) await this.checkDomainClaim(b.orgId, b.domain);
    return jsonOf(createProject(this.s, { projectId: b.id, orgId: b.orgId, repository: b.repository, ref: b.ref, domain: b.domain, allowedOrigins: b.allowedOrigins ?? [] }));
  }

  /**
   * A domain whose documentation was ingested before any project named it is claimed only by the organization that
   * ingested it: the one whose forge connection its followed repository resolved through. Without one recorded (a
   * one-off `docent docs ingest`, a followed site, the deployment's own connection), only an operator key for all
   * organizations may.
   */
  private async checkDomainClaim(orgId: string, domain: string): Promise<void> {
    if (await this.s.tenancy.getProjectByDomain(domain)) return; // taken: the create answers already_exists
    const source = await followedSource(this.s.schedules, domain);
    const forgeId = source && 'forgeId' in source ? source.forgeId : undefined;
    const ingestedBy = forgeId ? (await this.s.forges.get(forgeId))?.orgId : undefined;
    if (ingestedBy === orgId) return;
    const indexed = await this.s.docsIndex.es.indices.existsAlias({ name: docsAlias(this.s.docsIndex.indexPrefix, domain) });
    if (source === undefined && !indexed) return;
    throw new AppError(
      'permission_denied',
      `domain ${domain} already has documentation that organization ${orgId} did not ingest: only the deployment's operator (an operator key for all organizations) can give it to a project`,
    );
  }

  async getProject(who: AdminCaller, projectId: string): Promise<Json> {
    const { _id, ...project } = await visibleProject(this.s.tenancy, who, projectId);
    return { id: _id, ...project };
  }

  /**
   * An operator key sets the operator's settings; the project's admin key may only tighten them (src/tenancy/settings-levels.ts).
   * The repository, base ref and documentation domain are the operator's: they change what the agent reaches and
   * where the assistant answers, so a project's admin key asking for them is 403.
   */
  async updateProject(who: AdminCaller, projectId: string, update: z.infer<typeof projectSettingsBody>, note?: AuditNote): Promise<Json> {
    const { repository, ref, domain, ...settings } = update;
    const project = await visibleProject(this.s.tenancy, who, projectId);
    const level = who.kind === 'operator' ? 'operator' : 'project';
    const source = { ...(repository !== undefined && { repository }), ...(ref !== undefined && { ref }), ...(domain !== undefined && { domain }) };
    let moved: { json: unknown; audit?: AuditDetails } | undefined;
    if (Object.keys(source).length) {
      if (who.kind !== 'operator') throw new AppError('permission_denied', "a project's repository, base ref and documentation domain are changed with an operator key");
      if (domain !== undefined && domain !== project.domain && who.orgId !== undefined) await this.checkDomainClaim(project.orgId, domain);
      moved = await moveProjectSource(this.s, project, source);
    }
    const out = await updateProjectChecks(this.s, project._id, settings, level);
    note?.({ ...out.audit, changes: { ...moved?.audit?.changes, ...out.audit?.changes } });
    return { ...(out.json as Json), ...(moved?.json as Json | undefined) };
  }

  /** Deletes the project and what it owns, or refuses while a job works (src/admin/project-deletion.ts): an operator key of its organization. */
  async deleteProject(who: AdminCaller, projectId: string, note?: AuditNote): Promise<Json> {
    const project = await visibleProject(this.s.tenancy, who, projectId);
    if (who.kind !== 'operator') throw new AppError('permission_denied', 'deleting a project takes an operator key of its organization');
    return jsonOf(deleteProject(this.s, project), note);
  }

  /** Deletes an empty organization: an operator key for all organizations, as creating one. */
  deleteOrg(who: AdminCaller, orgId: string, note?: AuditNote): Promise<Json> {
    requireAllOrgs(who);
    return jsonOf(deleteOrg(this.s, orgId), note);
  }

  /** The key records the caller's key as its maker, so revoking that one revokes this one too. */
  async createKey(who: AdminCaller, projectId: string, b: z.infer<typeof createKeyBody>, note?: AuditNote): Promise<Json> {
    const restrictions = { ...(b.expiresAt && { expiresAt: new Date(b.expiresAt) }), ...(b.allowedIps?.length && { allowedIps: b.allowedIps }), ...(b.scope && { scope: b.scope }) };
    return jsonOf(createKey(this.s, await this.project(who, projectId), b.kind, b.groups ?? [], who.keyId, restrictions), note);
  }

  async listKeys(who: AdminCaller, projectId: string) {
    return this.s.keys.list({ projectId: await this.project(who, projectId) });
  }

  /** Revokes the key and the keys made with it, unless `keepMinted` (docs/decisions/2026-12-02-project-settings-levels.md). */
  async revokeKey(who: AdminCaller, projectId: string, keyId: string, opts: { keepMinted?: boolean } = {}, note?: AuditNote): Promise<Json> {
    if (!(await this.listKeys(who, projectId)).some((k) => k.id === keyId)) throw new AppError('not_found', `project ${projectId} has no key ${keyId}`);
    return jsonOf(revokeKey(this.s, keyId, opts), note);
  }

  async createWebhook(who: AdminCaller, projectId: string, b: z.infer<typeof createWebhookBody>): Promise<Json> {
    return jsonOf(createWebhook(this.s, await this.project(who, projectId), b.url, b.events));
  }

  async listWebhooks(who: AdminCaller, projectId: string): Promise<Json[]> {
    return (await jsonOf(listWebhooks(this.s, await this.project(who, projectId)))) as unknown as Json[];
  }

  async deleteWebhook(who: AdminCaller, projectId: string, webhookId: string): Promise<Json> {
    return jsonOf(deleteWebhook(this.s, await this.project(who, projectId), webhookId));
  }

  async webhookDeliveries(who: AdminCaller, projectId: string, webhookId: string): Promise<Json[]> {
    return (await jsonOf(webhookDeliveries(this.s, await this.project(who, projectId), webhookId))) as unknown as Json[];
  }

  async setSecret(who: AdminCaller, projectId: string, b: z.infer<typeof secretBody>): Promise<Json> {
    return jsonOf(setSecret(this.s, await this.project(who, projectId), b.name, b.value));
  }

  async listSecrets(who: AdminCaller, projectId: string): Promise<Array<{ name: string; updatedAt: Date }>> {
    return (await jsonOf(listSecrets(this.s, await this.project(who, projectId)))) as unknown as Array<{ name: string; updatedAt: Date }>;
  }

  async clearSetupCache(who: AdminCaller, projectId: string): Promise<{ id: string; setupCacheGeneration: number }> {
    return (await jsonOf(clearProjectSetupCache(this.s, await this.project(who, projectId)))) as { id: string; setupCacheGeneration: number };
  }

  /** A new secret for the project's GitHub webhook (token mode), shown only in this answer. */
  async issueGitHubWebhookSecret(who: AdminCaller, projectId: string): Promise<Json> {
    return jsonOf(issueWebhookSecret(this.s, this.s.github, await this.project(who, projectId)));
  }

  /** Pages, passages, the last ingest and, when followed, the schedule and its syncs (src/docs/docs-health.ts). */
  async docsStatus(who: AdminCaller, domain: string): Promise<DocsHealth> {
    await visibleDomain(this.s.tenancy, who, domain);
    return docsHealth({ schedules: this.s.schedules, ...this.s.docsIndex }, domain);
  }

  /** The served pages by path, with their passage counts, `limit` at a time after the path `after`. */
  async docsPages(who: AdminCaller, domain: string, opts: { limit?: number; after?: string }) {
    const limit = opts.limit ?? 100;
    // Out of bounds is 400, not clamped.
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new AppError('invalid_argument', 'limit must be a whole number from 1 to 500');
    if (opts.after !== undefined && (opts.after.length === 0 || opts.after.length > 1000)) throw new AppError('invalid_argument', 'after must be a page path of 1 to 1000 characters');
    await visibleDomain(this.s.tenancy, who, domain);
    return listIndexedPages(this.s.docsIndex.es, docsAlias(this.s.docsIndex.indexPrefix, domain), { limit, ...(opts.after !== undefined && { after: opts.after }) });
  }

  /** One served page's passages, in page order. */
  async docsPage(who: AdminCaller, domain: string, path: string) {
    if (!path || path.length > 1000) throw new AppError('invalid_argument', 'path is required: a page path of 1 to 1000 characters, as the page list names it');
    await visibleDomain(this.s.tenancy, who, domain);
    return indexedPagePassages(this.s.docsIndex.es, docsAlias(this.s.docsIndex.indexPrefix, domain), path);
  }

  /** Queues a sync now and answers at once with its id, which docsSyncRun follows. */
  async startDocsSync(who: AdminCaller, domain: string): Promise<DocsSyncRun> {
    await visibleDomain(this.s.tenancy, who, domain);
    return this.s.docsSyncRuns.start(domain);
  }

  async docsSyncRun(who: AdminCaller, domain: string, id: string): Promise<DocsSyncRun> {
    await visibleDomain(this.s.tenancy, who, domain);
    return this.s.docsSyncRuns.state(domain, id);
  }

  /** Follows a docs repository or a site (the CLI's `docs follow` and `docs ingest --sitemap`), checked as the CLI checks it. */
  async followDocs(who: AdminCaller, domain: string, b: z.infer<typeof followBody>) {
    const project = await visibleDomain(this.s.tenancy, who, domain);
    const { repository, sitemap, every, firstNow, ...git } = b;
    if ((repository === undefined) === (sitemap === undefined)) throw new AppError('invalid_argument', 'give either repository (a docs repository) or sitemap (a published site)');
    if (sitemap !== undefined && Object.values(git).some((v) => v !== undefined)) throw new AppError('invalid_argument', 'ref, docsPath and baseUrl go with repository, not sitemap');
    const followed = followInput(sitemap !== undefined ? { domain, sitemap, every } : { domain, repository: repository!, every, ...git });
    const { everyMs } = followed;
    // A domain of no project (the deployment operator's own) reads through the deployment's connection.
    const input = 'repository' in followed.input && project ? { ...followed.input, forgeId: (await this.s.gate.resolve(project.orgId, followed.input.repository, 'read')).forgeId } : followed.input;
    await followDocs(this.s.schedules, input, everyMs, { firstNow: firstNow ?? true });
    return { domain, source: input, everyMs, firstSyncStarted: firstNow ?? true };
  }

  async unfollowDocs(who: AdminCaller, domain: string): Promise<{ domain: string; followed: false }> {
    await visibleDomain(this.s.tenancy, who, domain);
    await unfollowDocs(this.s.schedules, domain);
    return { domain, followed: false };
  }

  /** Runs a sync now and waits for its end, as `docent docs sync` does. */
  async syncDocs(who: AdminCaller, domain: string): Promise<DocsSyncResult> {
    await visibleDomain(this.s.tenancy, who, domain);
    return syncDocsNow(this.s.schedules, domain);
  }

  /** Adds a forge connection of the organization, tested against the forge first; the answer is the only time its webhook secret is shown. */
  async addForge(who: AdminCaller, orgId: string, b: AddForgeBody): Promise<Json> {
    requireOrg(who, orgId);
    // An installation is named by a number anyone can guess: the deployment's operator, who can see whose it is, claims it.
    if (b.appInstallationId !== undefined && b.token === undefined && !(who.kind === 'operator' && who.orgId === undefined)) {
      throw new AppError(
        'permission_denied',
        "claiming an installation of the deployment's GitHub App takes an operator key for all organizations: ask the deployment's operator, or connect with a token",
      );
    }
    return jsonOf(addForge(this.s, orgId, b));
  }

  async listForges(who: AdminCaller, orgId: string): Promise<Json[]> {
    requireOrg(who, orgId);
    return (await jsonOf(listForges(this.s, orgId))) as unknown as Json[];
  }

  async removeForge(who: AdminCaller, orgId: string, forgeId: string): Promise<Json> {
    requireOrg(who, orgId);
    return jsonOf(removeForge(this.s, orgId, forgeId));
  }

  /** What one of the organization's connections' webhook received, and what was done or why not (another organization's job: ignored). */
  async forgeDeliveries(who: AdminCaller, orgId: string, forgeId: string): Promise<Json[]> {
    requireOrg(who, orgId);
    const connection = await this.s.forges.get(forgeId);
    if (!connection || connection.orgId !== orgId) throw new AppError('not_found', `organization ${orgId} has no forge connection ${forgeId}`);
    return (await this.s.githubDeliveries.ofConnection(forgeId)).map(deliveryToJson);
  }

  /** A new webhook secret for one of the organization's forge connections, shown only in this answer. */
  async rotateForgeWebhookSecret(who: AdminCaller, orgId: string, forgeId: string): Promise<Json> {
    requireOrg(who, orgId);
    return jsonOf(rotateForgeWebhookSecret(this.s, orgId, forgeId));
  }
}
