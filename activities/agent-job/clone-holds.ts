import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Activities } from '../index';

/** The activities that read or write a job's folders on this worker (its clone, context clones and sandbox home); a rename fails to compile here. */
const cloneActivityNames = ['prepareWorkspace', 'planChange', 'runAgent', 'commitAndPush', 'removeWorkspace'] as const satisfies ReadonlyArray<keyof Activities>;
export const CLONE_ACTIVITIES: ReadonlySet<string> = new Set(cloneActivityNames);

interface Hold {
  /** Steps of the job running on this worker now. */
  using: number;
  /** When the latest of them began, on this ledger's clock. */
  lastStart: number;
  /** A removal of the job's folders in progress: steps that begin wait for it. */
  removing?: Promise<void>;
}

/**
 * Which jobs' clones this worker's steps are using, so that a sweep never removes a clone under a turn: a step waits
 * for a removal in progress, and a removal is refused while a step runs or when one began after the sweep read the
 * store (the store may have said "ended" just before a follow-up made the job active again).
 */
export class CloneHolds {
  private clock = 0;
  private readonly holds = new Map<string, Hold>();

  /** Runs one step of the job while holding its clone. */
  async using<T>(jobId: string, step: () => Promise<T>): Promise<T> {
    for (let h = this.holds.get(jobId); h?.removing; h = this.holds.get(jobId)) await h.removing.catch(() => undefined);
    const hold = this.hold(jobId);
    hold.using++;
    hold.lastStart = ++this.clock;
    try {
      return await step();
    } finally {
      hold.using--;
    }
  }

  /** A point on the clock, taken before a sweep reads the store; also forgets jobs no step holds (they began before it). */
  mark(): number {
    for (const [jobId, h] of this.holds) if (h.using === 0 && !h.removing) this.holds.delete(jobId);
    return this.clock;
  }

  /** Runs `remove` unless a step of the job runs now or began after `mark`; says whether it ran. */
  async removeUnlessUsedSince(jobId: string, mark: number, remove: () => Promise<void>): Promise<boolean> {
    const held = this.holds.get(jobId);
    if (held && (held.using > 0 || held.lastStart > mark || held.removing)) return false;
    const hold = this.hold(jobId);
    hold.removing = remove();
    try {
      await hold.removing;
      return true;
    } finally {
      hold.removing = undefined;
    }
  }

  private hold(jobId: string): Hold {
    const found = this.holds.get(jobId);
    if (found) return found;
    const made = { using: 0, lastStart: 0 };
    this.holds.set(jobId, made);
    return made;
  }
}

/** Holds the job's clone for the whole of each clone activity this worker runs (a retried attempt included). */
export function holdingClones(holds: CloneHolds): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      execute: (input, next) => {
        const jobId = (input.args[0] as { jobId?: unknown } | undefined)?.jobId;
        if (!CLONE_ACTIVITIES.has(ctx.info.activityType) || typeof jobId !== 'string') return next(input);
        return holds.using(jobId, () => next(input));
      },
    },
  });
}
