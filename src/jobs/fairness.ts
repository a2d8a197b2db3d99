// How the agent task queues share workers between projects: each job's workflow starts with its project as Temporal's
// fairness key and the project's weight (docs/decisions/2026-11-27-tenant-fairness.md). Activities inherit both, and
// inside the worker what their steps wait on is taken by the same key in turn (docs/decisions/2026-12-02-worker-fairness.md).
import type { Client } from '@temporalio/client';
import type { Priority } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { inTurnsOf, type TurnOwner } from '../limits/project-turns';
import { defaultFairnessWeight, type ProjectDoc } from '../tenancy/store';
import { agentJobWorkflowId } from '../../workflows/agent-job-contract';

/** The priority a project's job workflows start with: dispatched in turn with other projects', in proportion to the weight. */
export function jobPriority(project: Pick<ProjectDoc, '_id' | 'fairnessWeight'>): Priority {
  // Project ids are at most 64 ASCII characters (src/tenancy/store.ts idPattern), Temporal's limit for a key.
  return { fairnessKey: project._id, fairnessWeight: project.fairnessWeight ?? defaultFairnessWeight };
}

const jobWorkflowPrefix = agentJobWorkflowId('');
/** Jobs whose owner a worker remembers: far more than run on one worker at once. */
const rememberedJobs = 10_000;

/**
 * The fairness key and weight of a job's workflow, as Temporal holds them. An activity's own info carries no
 * priority (Temporal 1.32 dispatches by the workflow's but sends the worker `{}`), so it is read once per job.
 */
export class JobTurnOwners {
  private readonly known = new Map<string, Promise<TurnOwner | undefined>>();

  constructor(private readonly temporal: Pick<Client, 'workflow'>) {}

  of(workflowId: string): Promise<TurnOwner | undefined> {
    const found = this.known.get(workflowId);
    if (found) return found;
    const read = this.read(workflowId);
    this.known.set(workflowId, read);
    if (this.known.size > rememberedJobs) this.known.delete(this.known.keys().next().value!);
    return read;
  }

  private async read(workflowId: string): Promise<TurnOwner | undefined> {
    try {
      const { raw } = await this.temporal.workflow.getHandle(workflowId).describe();
      const p = raw.workflowExecutionInfo?.priority;
      return p?.fairnessKey ? { key: p.fairnessKey, weight: p.fairnessWeight || defaultFairnessWeight } : undefined;
    } catch {
      // Not knowing the owner costs fairness, never the step: its waits go first come first served; the next step asks again.
      this.known.delete(workflowId);
      return undefined;
    }
  }
}

/** Each job step's waits inside the worker (src/limits/project-turns.ts) are its project's turns, with its weight. */
export function turnsByFairnessKey(owners: JobTurnOwners): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      execute: async (input, next) => {
        const workflowId = ctx.info.workflowExecution?.workflowId;
        const given = ctx.info.priority?.fairnessKey ? { key: ctx.info.priority.fairnessKey, weight: ctx.info.priority.fairnessWeight ?? defaultFairnessWeight } : undefined;
        const owner = given ?? (workflowId?.startsWith(jobWorkflowPrefix) ? await owners.of(workflowId) : undefined);
        return owner ? inTurnsOf(owner, () => next(input)) : next(input);
      },
    },
  });
}
