import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Db } from 'mongodb';

// A job's clone `<jobId>`, sandbox home `<jobId>.home` and context clones `<jobId>.context`, as jobFolder names them; nothing else is touched.
const jobEntry = /^(job_[A-Za-z0-9_-]{1,124})(\.home|\.context)?$/;

/** The folders in the workspace of jobs that are not active (finished, archived or deleted), by job id. */
export async function staleJobFolders(db: Db, workspaceDir: string): Promise<Map<string, string[]>> {
  const names = await readdir(workspaceDir).catch(() => [] as string[]);
  const byJob = new Map<string, string[]>();
  for (const name of names) {
    const m = jobEntry.exec(name);
    if (m) byJob.set(m[1]!, [...(byJob.get(m[1]!) ?? []), name]);
  }
  if (byJob.size === 0) return byJob;
  const active = await db
    .collection<{ _id: string; status: string }>('jobs')
    .find({ _id: { $in: [...byJob.keys()] }, status: 'active' }, { projection: { _id: 1 } })
    .toArray();
  for (const j of active) byJob.delete(j._id);
  return byJob;
}

/** Removes the named folders of one job from the workspace. */
export async function removeJobFolders(workspaceDir: string, names: string[]): Promise<void> {
  await Promise.all(names.map((name) => rm(path.join(workspaceDir, name), { recursive: true, force: true })));
}

/**
 * Removes the clones and sandbox homes of jobs that are not active (finished, archived or deleted), as a worker
 * starts: a worker killed mid-turn, or a cleanup that ran on another worker, leaves them on this disk otherwise.
 * Active jobs keep theirs, since a turn may be using it. Returns the job ids whose folders went.
 * While the worker runs, activities/agent-job/workspace-sweeper.ts does the same every period.
 */
export async function sweepStaleWorkspaces(db: Db, workspaceDir: string): Promise<string[]> {
  const stale = await staleJobFolders(db, workspaceDir);
  for (const names of stale.values()) await removeJobFolders(workspaceDir, names);
  return [...stale.keys()].sort();
}
