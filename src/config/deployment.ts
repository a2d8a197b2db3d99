// Which deployment a process belongs to, for what several deployments on one host may share (a workspace folder):
// two stacks differ in their system of record or in their Temporal queues, so both name the deployment.
import { createHash } from 'node:crypto';

export interface DeploymentSettings {
  mongo: { url: string; db: string };
  temporal: { namespace: string; taskQueuePrefix: string };
}

/** The MongoDB servers a URL names, without its credentials or options: `host1:27017,host2`. */
function mongoHosts(url: string): string {
  const afterScheme = url.replace(/^mongodb(\+srv)?:\/\//, '');
  const authority = afterScheme.split(/[/?]/, 1)[0] ?? '';
  return authority.slice(authority.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * The deployment's identity: the MongoDB servers and database (where its jobs are) and the Temporal namespace and
 * task-queue prefix (where its workflows run). No credential is part of it.
 */
export function deploymentIdentity(c: DeploymentSettings): string {
  return `mongo=${mongoHosts(c.mongo.url)}/${c.mongo.db} temporal=${c.temporal.namespace}/${c.temporal.taskQueuePrefix}`;
}

/** A short, path-safe name of the deployment (12 hex digits of its identity's hash). */
export function deploymentTag(c: DeploymentSettings): string {
  return createHash('sha256').update(deploymentIdentity(c)).digest('hex').slice(0, 12);
}
