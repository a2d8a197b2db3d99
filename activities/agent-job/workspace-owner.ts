// Whose a job's folders in the workspace are: `<jobId>.owner` beside them (never inside the clone, where a commit or the
// sandbox would see it) names the deployment (src/config/deployment.ts) and the worker that made them, so a sweep
// removes only its own deployment's folders even when several deployments share the workspace folder.
import { readFile, rename, writeFile } from 'node:fs/promises';
import { type DeploymentSettings, deploymentIdentity } from '../../src/config/deployment';

/** Who made a job's folders: the deployment's identity and the worker's. */
export interface WorkspaceOwner {
  deployment: string;
  worker: string;
}

/** This worker's mark on the folders it makes. */
export const workspaceOwnerOf = (config: DeploymentSettings, worker: string): WorkspaceOwner => ({ deployment: deploymentIdentity(config), worker });

/** The marker's suffix: `<jobId>.owner` (activities/agent-job/git.ts, ownerMarkerPath). */
export const OWNER_SUFFIX = '.owner';

/** What a marker file says; undefined when there is none or it cannot be read as one. */
export async function readOwner(file: string): Promise<WorkspaceOwner | undefined> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<WorkspaceOwner>;
    return typeof parsed.deployment === 'string' && typeof parsed.worker === 'string' ? { deployment: parsed.deployment, worker: parsed.worker } : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the marker before the job's folders are made (kept when it already names this deployment and worker). */
export async function markOwner(file: string, owner: WorkspaceOwner): Promise<void> {
  const found = await readOwner(file);
  if (found?.deployment === owner.deployment && found.worker === owner.worker) return;
  // Whole or not at all: a sweep reading a half-written marker would take the folders for another's.
  await writeFile(`${file}.tmp`, `${JSON.stringify({ ...owner, markedAt: new Date().toISOString() })}\n`, { mode: 0o600 });
  await rename(`${file}.tmp`, file);
}
