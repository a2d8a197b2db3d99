import type { ApiKeyStore, Caller, OperatorCaller } from '../auth/api-keys';
import { AppError } from '../errors';
import type { ProjectDoc, TenancyStore } from '../tenancy/store';

/** Who may call the operator API: an operator key (all organizations or one), or a project's admin key. */
export type AdminCaller = OperatorCaller | Caller;

/** Resolves an operator key or an admin key (or a console session made from one); an assistant key is 403, no key or a bad one 401. */
export function adminCaller(keys: ApiKeyStore, authorization: string | undefined): Promise<AdminCaller> {
  return keys.authenticateAdminOrOperator(authorization);
}

/** Organization-wide operations: an operator key for every organization or for this one. */
export function requireOrg(caller: AdminCaller, orgId: string): void {
  if (caller.kind !== 'operator') throw new AppError('permission_denied', 'this operation needs an operator key');
  if (caller.orgId !== undefined && caller.orgId !== orgId) throw new AppError('not_found', `organization ${orgId} not found`);
}

/** Operations that span organizations (creating one): an operator key for every organization only. */
export function requireAllOrgs(caller: AdminCaller): void {
  if (caller.kind !== 'operator' || caller.orgId !== undefined) throw new AppError('permission_denied', 'this operation needs an operator key for all organizations');
}

/** The project, if the caller may administer it; another organization's or project's is 404, as if it did not exist. */
export async function visibleProject(tenancy: TenancyStore, caller: AdminCaller, projectId: string): Promise<ProjectDoc> {
  const project = await tenancy.getProject(projectId);
  const sees = project && (caller.kind === 'operator' ? caller.orgId === undefined || caller.orgId === project.orgId : caller.projectId === projectId);
  if (!project || !sees) throw new AppError('not_found', `project ${projectId} not found`);
  return project;
}

/**
 * The project a documentation domain belongs to, if the caller may administer it. A domain no project has (followed by
 * the CLI alone) is for operator keys of all organizations only; for anyone else it does not exist.
 */
export async function visibleDomain(tenancy: TenancyStore, caller: AdminCaller, domain: string): Promise<ProjectDoc | undefined> {
  const project = await tenancy.getProjectByDomain(domain);
  if (project) return visibleProject(tenancy, caller, project._id);
  if (caller.kind === 'operator' && caller.orgId === undefined) return undefined;
  throw new AppError('not_found', `domain ${domain} not found`);
}

/** The project's admin caller for services that authorise one (automations): the admin key itself, or made for an operator key that sees the project. */
export function projectAdminCaller(caller: AdminCaller, project: ProjectDoc): Caller {
  return caller.kind === 'operator' ? { keyId: caller.keyId, kind: 'admin', orgId: project.orgId, projectId: project._id, ...(project.domain && { domain: project.domain }) } : caller;
}

/**
 * The caller of a public project route that needs the project's admin (`/v2/agent/{projectId}/…`,
 * `/v1/analytics/{projectId}/…`): an admin key as it is (the route checks it is this project's), or an operator key
 * whose scope covers the project, as that project's admin, which it could also become by making an admin key through
 * the operator API. For an operator key, another organization's project is 404, as another project is for an admin key.
 */
export async function projectRouteCaller(keys: ApiKeyStore, tenancy: TenancyStore, authorization: string | undefined, projectId: string): Promise<Caller> {
  const caller = await keys.authenticateAdminOrOperator(authorization);
  if (caller.kind !== 'operator') return caller;
  return projectAdminCaller(caller, await visibleProject(tenancy, caller, projectId));
}
