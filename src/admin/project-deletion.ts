// Deleting a project or an organization (issue 55): what goes is said before it goes (docs/operator-api.md), and
// nothing is left half-removed. A project with a working job is refused; otherwise what the project owns goes first
// and its document last, each step idempotent, so a delete that fails midway leaves the project there and a repeated
// delete finishes it (docs/decisions/2026-12-02-change-and-remove.md).
import { AppError } from '../errors';
import type { ApiKeyStore } from '../auth/api-keys';
import { type DocsSyncSchedules, unfollowDocs } from '../docs/sync-schedule';
import type { ProjectWebhookSecrets } from '../github/webhook-secrets';
import type { ForgeStore } from '../forges/forge-store';
import type { ProjectSecretStore } from '../secrets/project-secrets';
import type { ProjectDoc, TenancyStore } from '../tenancy/store';
import type { WebhookStore } from '../webhooks/store';
import type { Output } from './tenancy-operations';

/** What deleting a project needs beyond the tenancy store: everything it owns. */
export interface ProjectOwned {
  tenancy: TenancyStore;
  keys: ApiKeyStore;
  webhooks: WebhookStore;
  secrets: ProjectSecretStore;
  schedules: DocsSyncSchedules;
  githubWebhookSecrets: ProjectWebhookSecrets;
  /** The project's automations with their schedules and runs. */
  automations: { removeAllOf(projectId: string): Promise<string[]> };
  /** How many of the project's jobs are working (status active). */
  activeJobs(projectId: string): Promise<number>;
}

/** The sentence every surface shows before a project is deleted (the console's dialog, the CLI's --yes, docs). */
export const projectDeletionConsequence =
  'Deletes the project: its keys are revoked, its automations (with their schedules and runs), webhook endpoints, secrets and GitHub webhook secret are deleted, and its documentation domain is no longer followed or served. Its jobs stay in the database but can no longer be read through the API; the pull requests they opened stay on the forge. Refused while a job is working.';

export async function deleteProject(s: ProjectOwned, project: ProjectDoc): Promise<Output> {
  const projectId = project._id;
  const working = await s.activeJobs(projectId);
  if (working > 0)
    throw new AppError(
      'failed_precondition',
      `project ${projectId} has ${working} working job${working === 1 ? '' : 's'}: archive ${working === 1 ? 'it' : 'them'} or wait until done, then delete the project`,
    );
  const automations = await s.automations.removeAllOf(projectId);
  if (project.domain) await unfollowDocs(s.schedules, project.domain).catch((err: unknown) => ignoreNotFound(err));
  const webhooks = await s.webhooks.list(projectId);
  for (const w of webhooks) await s.webhooks.remove(projectId, w._id);
  const secrets = await s.secrets.removeAllOf(projectId);
  await s.githubWebhookSecrets.remove(projectId);
  const revokedKeys = await s.keys.revokeAllOf(projectId);
  // Last: until this the project exists, so a delete that failed above is simply asked again.
  await s.tenancy.removeProject(projectId);
  const removed = { automations, webhooks: webhooks.map((w) => w._id), secrets, revokedKeys };
  return {
    text: `deleted project ${projectId}: revoked ${revokedKeys.length} keys, deleted ${automations.length} automations, ${webhooks.length} webhook endpoints and ${secrets.length} secrets${project.domain ? `; ${project.domain} is no longer served` : ''}`,
    json: { id: projectId, deleted: true, ...removed },
    audit: { revokedKeys },
  };
}

/** The sentence shown before an organization is deleted. */
export const orgDeletionConsequence = 'Deletes the organization: its forge connections are removed and its operator keys revoked. Refused while it has projects: delete those first.';

export async function deleteOrg(s: { tenancy: TenancyStore; keys: ApiKeyStore; forges: ForgeStore }, orgId: string): Promise<Output> {
  if (!(await s.tenancy.hasOrg(orgId))) throw new AppError('not_found', `organization ${orgId} not found`);
  const projects = await s.tenancy.listProjects(20, orgId);
  if (projects.length) throw new AppError('failed_precondition', `organization ${orgId} still has projects (${projects.map((p) => p._id).join(', ')}): delete them first`);
  const forges = await s.forges.list(orgId);
  for (const f of forges) await s.forges.remove(orgId, f.id);
  const revokedKeys = await s.keys.revokeOperatorKeysOf(orgId);
  // Last, and refused again if a project was made meanwhile: the organization is there until nothing needs it.
  await s.tenancy.removeOrg(orgId);
  return {
    text: `deleted organization ${orgId}: removed ${forges.length} forge connections, revoked ${revokedKeys.length} operator keys`,
    json: { id: orgId, deleted: true, forges: forges.map((f) => f.id), revokedKeys },
    audit: { revokedKeys },
  };
}

function ignoreNotFound(err: unknown): void {
  if (!(err instanceof AppError && err.code === 'not_found')) throw err;
}
