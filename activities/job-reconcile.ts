import type { Client as TemporalClient } from '@temporalio/client';
import type { Db } from 'mongodb';
import { reconcileActiveJobs } from '../src/agent/job-reconcile';
import type { Logger } from '../src/log';
import type { ReconcileJobsInput, ReconcileJobsResult } from '../workflows/contracts';

export function createReconcileActivities(deps: { db: Db; temporal?: TemporalClient; log?: Logger }) {
  return {
    async reconcileActiveJobs(input: ReconcileJobsInput): Promise<ReconcileJobsResult> {
      if (!deps.temporal) throw new Error('the reconciler needs the worker’s Temporal client');
      return reconcileActiveJobs({ db: deps.db, temporal: deps.temporal, log: deps.log }, input.olderThanMs);
    },
  };
}
