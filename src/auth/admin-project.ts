import { AppError } from '../errors';
import type { ProjectDoc, TenancyStore } from '../tenancy/store';
import type { Caller } from './api-keys';

const idShape = /^[A-Za-z0-9_.-]{1,64}$/;

/** The project an admin key is bound to, when it is the one the path names; any other project is `not_found`. */
export async function adminProject(tenancy: TenancyStore, caller: Caller, projectId: string): Promise<ProjectDoc> {
  if (caller.kind !== 'admin') throw new AppError('permission_denied', 'this endpoint needs an admin key');
  if (caller.projectId !== projectId || !idShape.test(projectId)) throw new AppError('not_found', 'project not found');
  const project = await tenancy.getProject(projectId);
  if (!project) throw new AppError('not_found', 'project not found');
  return project;
}
