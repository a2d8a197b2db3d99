import type { RunningGateway } from './gateway';

/**
 * Project `kiln` serving `domain` and project `other` on another domain, in org acme: the domain's assistant key, kiln's
 * admin key, and other's admin key (which must see nothing of kiln).
 */
export async function kilnDocsProjects(gw: RunningGateway, domain: string): Promise<{ asst: string; admin: string; otherAdmin: string }> {
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'kiln', orgId: 'acme', repository: 'acme/kiln', ref: 'main', domain });
  await gw.deps.tenancy.createProject({ _id: 'other', orgId: 'acme', repository: 'acme/other', ref: 'main', domain: 'docs.other.test' });
  return {
    asst: (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key,
    admin: (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'kiln' })).key,
    otherAdmin: (await gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'other' })).key,
  };
}
