// How the agent task queues share workers between projects: each job's workflow starts with its project as Temporal's
// fairness key and the project's weight (docs/decisions/2026-11-27-tenant-fairness.md). Activities inherit both.
import type { Priority } from '@temporalio/common';
import { defaultFairnessWeight, type ProjectDoc } from '../tenancy/store';

/** The priority a project's job workflows start with: dispatched in turn with other projects', in proportion to the weight. */
export function jobPriority(project: Pick<ProjectDoc, '_id' | 'fairnessWeight'>): Priority {
  // Project ids are at most 64 ASCII characters (src/tenancy/store.ts idPattern), Temporal's limit for a key.
  return { fairnessKey: project._id, fairnessWeight: project.fairnessWeight ?? defaultFairnessWeight };
}
