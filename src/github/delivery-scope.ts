import { deploymentForgeId } from '../forges/forge-connection';
import type { ProjectDoc } from '../tenancy/store';
import type { Forge } from '../forges/forge';

/**
 * Whose a verified delivery is: the forge connection whose secret signed it. It acts only on the projects (and their
 * jobs and automations) whose repository resolved through that connection, in its organization, and with a project's
 * own secret (token mode) on that one project; every API call it causes uses that connection's credentials.
 */
export interface DeliveryScope {
  /** The verifying connection: `deployment` for DOCENT_GITHUB_WEBHOOK_SECRET and the project secrets on the deployment's credential. */
  forgeId: string;
  /** The connection's organization; undefined for the deployment's (each organization sharing it). */
  orgId?: string;
  /** Token mode: the project whose own webhook secret signed it. */
  projectId?: string;
  /** The connection's forge: every API call the delivery causes goes through it. */
  forge: Forge;
}

/** Whether a delivery of this scope may act on the project. */
export function projectInScope(p: Pick<ProjectDoc, '_id' | 'orgId' | 'forgeId'>, scope: DeliveryScope): boolean {
  return (p.forgeId ?? deploymentForgeId) === scope.forgeId && (scope.orgId === undefined || p.orgId === scope.orgId) && (scope.projectId === undefined || p._id === scope.projectId);
}
