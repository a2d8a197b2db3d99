import type { z } from 'zod';
import type { ApiKeyStore } from '../auth/api-keys';
import { AppError } from '../errors';
import type { ProjectSecretStore } from '../secrets/project-secrets';
import type { TenancyStore } from '../tenancy/store';
import type { WebhookStore } from '../webhooks/store';
import { type AdminCaller, requireAllOrgs, requireOrg, visibleProject } from './access';
import type { createKeyBody, createProjectBody, createWebhookBody, projectSettingsBody, secretBody } from './admin-bodies';
import { setSecret, listSecrets } from './secret-operations';
import { clearProjectSetupCache, createKey, createOrg, createProject, revokeKey, updateProjectChecks } from './tenancy-operations';
import { createWebhook, deleteWebhook, listWebhooks, webhookDeliveries } from './webhook-operations';

export interface AdminStores {
  tenancy: TenancyStore;
  keys: ApiKeyStore;
  webhooks: WebhookStore;
  secrets: ProjectSecretStore;
}

const listLimit = 500;

// The JSON of an operation (src/admin/*-operations.ts), typed for the surfaces that answer with it.
type Json = Record<string, unknown>;
const jsonOf = async (out: Promise<{ json: unknown }>) => (await out).json as Json;

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

  createProject(who: AdminCaller, b: z.infer<typeof createProjectBody>): Promise<Json> {
    requireOrg(who, b.orgId);
    return jsonOf(createProject(this.s, { projectId: b.id, orgId: b.orgId, repository: b.repository, ref: b.ref, domain: b.domain, allowedOrigins: b.allowedOrigins ?? [] }));
  }

  async getProject(who: AdminCaller, projectId: string): Promise<Json> {
    const { _id, ...project } = await visibleProject(this.s.tenancy, who, projectId);
    return { id: _id, ...project };
  }

  async updateProject(who: AdminCaller, projectId: string, update: z.infer<typeof projectSettingsBody>): Promise<Json> {
    return jsonOf(updateProjectChecks(this.s, await this.project(who, projectId), update));
  }

  async createKey(who: AdminCaller, projectId: string, b: z.infer<typeof createKeyBody>): Promise<Json> {
    return jsonOf(createKey(this.s, await this.project(who, projectId), b.kind, b.groups ?? []));
  }

  async listKeys(who: AdminCaller, projectId: string) {
    return this.s.keys.list({ projectId: await this.project(who, projectId) });
  }

  async revokeKey(who: AdminCaller, projectId: string, keyId: string): Promise<Json> {
    if (!(await this.listKeys(who, projectId)).some((k) => k.id === keyId)) throw new AppError('not_found', `project ${projectId} has no key ${keyId}`);
    return jsonOf(revokeKey(this.s, keyId));
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
}
