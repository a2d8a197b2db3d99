import { Worker, type Logger } from '@temporalio/worker';
import type { CompiledWorkerOptions } from '@temporalio/worker/lib/worker-options';
import type { WorkflowCreator } from '@temporalio/worker/lib/workflow/interface';
import type { WorkflowBundleWithSourceMapAndFilename } from '@temporalio/worker/lib/workflow/workflow-worker-thread/input';

/**
 * A Worker class whose instances run their workflows on one workflow thread between them. The SDK gives each Worker
 * a thread of its own, and a docent worker has one Worker per task queue (three). With `reuseV8Context` (the SDK's
 * default) a thread holds one V8 context for all its workflows, so a second thread adds nothing but its start: about
 * 0.16 s of CPU and its own copy of the bundle and the Temporal protos (docs/decisions/2026-11-23-production-topology.md, "One workflow
 * thread"). The Workers of one class must share their bundle, activities and options; the thread stops with the last.
 */
export function workersSharingOneWorkflowThread(): typeof Worker {
  let shared: Promise<WorkflowCreator> | undefined;
  let users = 0;
  return class SharedThreadWorker extends Worker {
    protected static override async createWorkflowCreator(bundle: WorkflowBundleWithSourceMapAndFilename, options: CompiledWorkerOptions, logger: Logger): Promise<WorkflowCreator> {
      users += 1;
      shared ??= Worker.createWorkflowCreator(bundle, options, logger);
      let creator: WorkflowCreator;
      try {
        creator = await shared;
      } catch (err) {
        // A thread that failed to start is not kept for the next Worker.
        users -= 1;
        shared = undefined;
        throw err;
      }
      let released = false;
      return {
        createWorkflow: (workflow) => creator.createWorkflow(workflow),
        // Each Worker destroys its creator as it stops; the thread goes with the last.
        async destroy() {
          if (released) return;
          released = true;
          users -= 1;
          if (users > 0) return;
          shared = undefined;
          await creator.destroy();
        },
      };
    }
  };
}
