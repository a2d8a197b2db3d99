import { CancellationScope, deprecatePatch, patched } from '@temporalio/workflow';
import type { ContextRepository } from '../agent-job-contract';
import { AGENT_JOB_PATCHES } from '../agent-job-patches';
import { type CloneRoute, cloneWorkerGone } from '../clone-route';
import type { Job } from './job';

/** Workers a turn may start over on when the one holding its clone vanishes, before it fails. */
const maxWorkerMoves = 3;

/** Runs `step` until it ends on one worker: when the worker holding the clone is gone, it starts over on another (`moved` says so). */
export async function onOneWorker<T>(route: CloneRoute, step: (move: number) => Promise<T>, moved?: (move: number) => void): Promise<T> {
  for (let move = 1; ; move++) {
    try {
      return await step(move);
    } catch (err) {
      if (!cloneWorkerGone(err) || move >= maxWorkerMoves) throw err;
      moved?.(move);
      route.forget();
    }
  }
}

/** The agent steps' field naming the job's context repositories, left out when it has none (so older inputs stay as they were). */
export function contextOf(job: Job): { contextRepositories?: ContextRepository[] } {
  const repos = job.input.contextRepositories;
  return repos?.length ? { contextRepositories: repos } : {};
}

/** Removes the job's clones once it has no instruction left. */
export async function removeClones(job: Job): Promise<void> {
  if (job.route) await job.route.removeClones(job.input.jobId, job.gitOptions);
  // Added after jobs were already running: histories without this step replay without it.
  else if (patched(AGENT_JOB_PATCHES.removeWorkspaceWhenIdle)) await job.git.removeWorkspace({ jobId: job.input.jobId });
}

/** Removes the clones of an archived job (the gateway has recorded it): the clone of a possibly private repository goes even so. */
export async function removeClonesOfArchivedJob(job: Job): Promise<void> {
  const { route } = job;
  if (route) return CancellationScope.nonCancellable(() => route.removeClones(job.input.jobId, job.gitOptions));
  deprecatePatch(AGENT_JOB_PATCHES.removeWorkspaceWhenArchived);
  await CancellationScope.nonCancellable(() => job.git.removeWorkspace({ jobId: job.input.jobId }));
}
