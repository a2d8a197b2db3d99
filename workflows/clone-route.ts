import { ActivityFailure, proxyActivities, TimeoutFailure, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../activities';

/** A step nobody took from the clone's queue in time: the worker holding the clone is gone (and did not come back). */
export function cloneWorkerGone(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'SCHEDULE_TO_START';
}

/**
 * Where a job's clone is: the task queue of the worker that cloned it (activities/agent-job/workspace-queue.ts). The steps
 * after the clone go there, so they find it instead of cloning again on whichever worker polls first, and the
 * cleanup reaches every worker that got a clone.
 */
export class CloneRoute {
  private queue?: string;
  /** Every worker queue that got a clone since the last cleanup. */
  private readonly visited = new Set<string>();

  constructor(private readonly waitMs: number) {}

  /** Activities with these options, on the clone's worker once there is one, else on the shared agent queue. */
  on(options: ActivityOptions) {
    // Retries of a step stay on the clone's queue; a worker that stays away ends the step with a schedule-to-start timeout.
    return proxyActivities<Activities>(this.queue ? { ...options, taskQueue: this.queue, scheduleToStartTimeout: this.waitMs } : options);
  }

  /** Whether a worker holds the job's clone (later steps go there). */
  get settled(): boolean {
    return this.queue !== undefined;
  }

  /**
   * A step with these options on `preferred` (the worker holding the project's setup cache) if that worker takes it
   * within `waitMs`; otherwise, or without a preference, as `on` sends it.
   */
  async preferring<T>(preferred: string | undefined, waitMs: number, options: ActivityOptions, step: (activities: ReturnType<CloneRoute['on']>) => Promise<T>): Promise<T> {
    if (preferred && !this.queue) {
      try {
        return await step(proxyActivities<Activities>({ ...options, taskQueue: preferred, scheduleToStartTimeout: waitMs }));
      } catch (err) {
        if (!cloneWorkerGone(err)) throw err;
      }
    }
    return step(this.on(options));
  }

  /** The worker that prepared the clone; a worker older than this code names none, and the route stays shared. */
  settle(queue: string | undefined): void {
    this.queue = queue;
    if (queue) this.visited.add(queue);
  }

  /** Starts over on another worker: the next prepare clones wherever the shared queue sends it. */
  forget(): void {
    this.queue = undefined;
  }

  /** Removes the clone on every worker that got one; a worker that stays away sweeps it when it starts again. */
  async removeClones(jobId: string, options: ActivityOptions): Promise<void> {
    const queues = [...this.visited];
    this.visited.clear();
    this.queue = undefined;
    await Promise.allSettled(queues.map((taskQueue) => proxyActivities<Activities>({ ...options, taskQueue, scheduleToStartTimeout: this.waitMs }).removeWorkspace({ jobId })));
  }
}
