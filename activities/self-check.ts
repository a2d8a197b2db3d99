import type { Client as EsClient } from '@elastic/elasticsearch';
import { activityInfo } from '@temporalio/activity';
import type { Db } from 'mongodb';
import type { DependencyCheck, WorkerSelfCheckResult } from '../workflows/worker-self-check-contract';

export interface SelfCheckDeps {
  db: Db;
  es: EsClient;
  workerIdentity: string;
}

async function check(run: () => Promise<unknown>): Promise<DependencyCheck> {
  try {
    await run();
    return { ok: true };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.name : 'error' };
  }
}

export function createSelfCheckActivities(deps: SelfCheckDeps) {
  return {
    /** Read-only and safe to retry: pings the worker's MongoDB and Elasticsearch. */
    async checkWorkerDependencies(_input: { requestedBy: string }): Promise<WorkerSelfCheckResult> {
      const [mongodb, elasticsearch] = await Promise.all([check(() => deps.db.command({ ping: 1 })), check(() => deps.es.cluster.health({ timeout: '5s' }))]);
      return { workerIdentity: deps.workerIdentity, taskQueue: activityInfo().taskQueue, mongodb, elasticsearch };
    },
  };
}
