import type { Db } from 'mongodb';
import type { CloneHolds } from './clone-holds';
import { removeJobFolders, staleJobFolders } from './workspace-sweep';

/**
 * Removes, while the worker runs, the folders of this deployment's jobs that have ended and that no step on this worker is using: what
 * a timed-out attempt retried elsewhere, a prepare that finished after its turn was stopped, or a removal that gave up
 * on this worker while it was away left behind (docs/reliability.md, "Found: clones left behind").
 */
export class WorkspaceSweeper {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly workspaceDir: string,
    private readonly holds: CloneHolds,
    /** This deployment's identity (src/config/deployment.ts): only folders marked with it are swept. */
    private readonly deployment: string,
  ) {}

  /** One pass; returns the job ids whose folders went. */
  async sweep(): Promise<string[]> {
    // Taken before the store is read: a step that begins after it may belong to a turn accepted since.
    const mark = this.holds.mark();
    const stale = await staleJobFolders(this.db, this.workspaceDir, this.deployment);
    const removed: string[] = [];
    for (const [jobId, names] of stale) {
      if (await this.holds.removeUnlessUsedSince(jobId, mark, () => removeJobFolders(this.workspaceDir, names))) removed.push(jobId);
    }
    return removed.sort();
  }

  /** Sweeps every `everyMs` until stop(); a pass that fails (the store down) is reported and the next one tries again. */
  start(everyMs: number, report: (removed: string[] | Error) => void): void {
    const next = () => {
      if (this.stopped) return;
      this.timer = setTimeout(() => {
        this.pass = this.sweep()
          .then(
            (removed) => removed.length && report(removed),
            (err: unknown) => report(err instanceof Error ? err : new Error(String(err))),
          )
          .finally(next);
      }, everyMs);
      this.timer.unref();
    };
    next();
  }

  /** Stops sweeping; resolves once a pass in progress has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.pass;
  }
}
