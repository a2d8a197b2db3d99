import type { Db } from 'mongodb';
import type { PreferredSetupWorkerInput, PreferredSetupWorkerResult } from '../../workflows/agent-job-contract';

interface HolderDoc {
  /** The project id. */
  _id: string;
  /** The task queue of the worker that last stored or restored the project's setup (activities/agent-job/workspace-queue.ts). */
  workspaceQueue: string;
  at: Date;
}

/**
 * Which worker last stored or restored each project's setup: where the project's next job prefers to clone, since
 * that worker most likely holds the key of the project's current lockfile. Only a hint: it names no key.
 */
export class SetupCacheHolders {
  constructor(private readonly db: Db) {}

  private get holders() {
    return this.db.collection<HolderDoc>('setupCacheHolders');
  }

  async record(project: string, workspaceQueue: string): Promise<void> {
    await this.holders.updateOne({ _id: project }, { $set: { workspaceQueue, at: new Date() } }, { upsert: true });
  }

  async preferred(project: string): Promise<string | undefined> {
    return (await this.holders.findOne({ _id: project }))?.workspaceQueue;
  }
}

export function createSetupCacheActivities(deps: { holders: SetupCacheHolders }) {
  return {
    /** The worker a job of the project should try first for its clone, if any worker holds the project's setup. */
    async preferredSetupWorker(input: PreferredSetupWorkerInput): Promise<PreferredSetupWorkerResult> {
      const workspaceQueue = await deps.holders.preferred(input.projectId);
      return workspaceQueue ? { workspaceQueue } : {};
    },
  };
}
