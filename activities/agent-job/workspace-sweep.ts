import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Db } from 'mongodb';
import { OWNER_SUFFIX, readOwner } from './workspace-owner';

// A job's clone `<jobId>`, sandbox home `<jobId>.home`, context clones `<jobId>.context` and marker `<jobId>.owner`, as
// jobFolder names them; nothing else is touched.
const jobEntry = /^(job_[A-Za-z0-9_-]{1,124})(\.home|\.context|\.owner)?$/;

/**
 * The folders in the workspace of jobs that are not active (finished, archived or deleted), by job id: only those
 * whose marker names `deployment`, since other deployments (a test or staging stack) may share the folder. Folders
 * without a marker (made before markers were written) go only when this deployment's database has the job as ended:
 * a job it does not know may be another deployment's.
 */
export async function staleJobFolders(db: Db, workspaceDir: string, deployment: string): Promise<Map<string, string[]>> {
  const names = await readdir(workspaceDir).catch(() => [] as string[]);
  const byJob = new Map<string, string[]>();
  for (const name of names) {
    const m = jobEntry.exec(name);
    if (m) byJob.set(m[1]!, [...(byJob.get(m[1]!) ?? []), name]);
  }
  const unmarked = new Set<string>();
  for (const [jobId, entries] of byJob) {
    const owner = entries.includes(jobId + OWNER_SUFFIX) ? await readOwner(path.join(workspaceDir, jobId + OWNER_SUFFIX)) : undefined;
    if (!owner) unmarked.add(jobId);
    else if (owner.deployment !== deployment) byJob.delete(jobId);
  }
  if (byJob.size === 0) return byJob;
  const known = await db
    .collection<{ _id: string; status: string }>('jobs')
    .find({ _id: { $in: [...byJob.keys()] } }, { projection: { _id: 1, status: 1 } })
    .toArray();
  const status = new Map(known.map((j) => [j._id, j.status]));
  for (const jobId of byJob.keys()) {
    const s = status.get(jobId);
    if (s === 'active' || (unmarked.has(jobId) && s === undefined)) byJob.delete(jobId);
  }
  return byJob;
}

/** Removes the named folders of one job from the workspace; its marker last, so folders left by a failed removal stay known. */
export async function removeJobFolders(workspaceDir: string, names: string[]): Promise<void> {
  const isMarker = (name: string) => name.endsWith(OWNER_SUFFIX);
  await Promise.all(names.filter((n) => !isMarker(n)).map((name) => rm(path.join(workspaceDir, name), { recursive: true, force: true })));
  await Promise.all(names.filter(isMarker).map((name) => rm(path.join(workspaceDir, name), { force: true })));
}

/**
 * Removes this deployment's clones and sandbox homes of jobs that are not active (finished, archived or deleted), as a
 * worker starts: a worker killed mid-turn, or a cleanup that ran on another worker, leaves them on this disk otherwise.
 * Active jobs keep theirs, since a turn may be using it. Returns the job ids whose folders went.
 * While the worker runs, activities/agent-job/workspace-sweeper.ts does the same every period.
 */
export async function sweepStaleWorkspaces(db: Db, workspaceDir: string, deployment: string): Promise<string[]> {
  const stale = await staleJobFolders(db, workspaceDir, deployment);
  for (const names of stale.values()) await removeJobFolders(workspaceDir, names);
  return [...stale.keys()].sort();
}
