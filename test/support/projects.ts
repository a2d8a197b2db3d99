import type { RunningGateway } from './gateway';

/** Org `acme` with project `widgets` on `acme/widgets@main`, as most agent tests use it; returns the project's admin key. */
export async function createWidgetsProject(gw: RunningGateway): Promise<string> {
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'widgets', orgId: 'acme', repository: 'acme/widgets', ref: 'main' });
  return (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'widgets' })).key;
}
