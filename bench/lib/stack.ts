// Set-up and clean-up against the shared local stack: fresh names for everything, removed afterwards.
import { randomBytes } from 'node:crypto';
import type { Client as TemporalClient } from '@temporalio/client';
import { MongoClient } from 'mongodb';

/** A short random id for this run's databases, indexes, task queues and projects. */
export const runId = () => randomBytes(4).toString('hex');

/** Drops the databases earlier runs left (a benchmark whose gateway may still have had writes in flight keeps its own); one `npm run bench` at a time, as on the shared stack. */
export async function dropEarlierBenchDatabases(mongoUrl: string): Promise<string[]> {
  const client = new MongoClient(mongoUrl, { serverSelectionTimeoutMS: 5_000 });
  try {
    const { databases } = await client.db().admin().listDatabases({ nameOnly: true });
    const earlier = databases.map((d) => d.name).filter((name) => name.startsWith('docent_bench_'));
    for (const name of earlier) await client.db(name).dropDatabase();
    return earlier;
  } finally {
    await client.close();
  }
}

/** The settings every benchmark gateway starts from: its own names, quiet logs, limits out of the way unless a benchmark says otherwise. */
export function benchEnv(run: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DOCENT_MONGO_DB: `docent_bench_${run}`,
    DOCENT_TASK_QUEUE_PREFIX: `bench-${run}-`,
    DOCENT_ES_INDEX_PREFIX: `bench-${run}`,
    DOCENT_LOG_LEVEL: 'silent',
    // Each run's organizations use the deployment's token, as the tests' do (test/support/config.ts).
    DOCENT_GITHUB_SHARED_ORGS: '*',
    DOCENT_LIMIT_JOBS_PER_HOUR: '10000000',
    DOCENT_LIMIT_ASSISTANT_PER_KEY_MONTH: '10000000',
    DOCENT_LIMIT_ASSISTANT_PER_ORG_HOUR: '10000000',
    DOCENT_LIMIT_ASSISTANT_PER_IP_DAY: '10000000',
    DOCENT_LIMIT_SEARCH_PER_KEY_MONTH: '10000000',
    DOCENT_LIMIT_SEARCH_PER_ORG_HOUR: '10000000',
    DOCENT_LIMIT_SEARCH_PER_IP_DAY: '10000000',
    ...extra,
  };
}

/**
 * Terminates every workflow this run started (matched by a visibility query) with one server-side batch operation,
 * and waits for it; benchmark workflows without a worker would otherwise stay open on the shared dev server.
 */
export async function terminateWorkflows(client: TemporalClient, query: string, namespace = 'default'): Promise<number> {
  const svc = client.workflowService;
  const count = Number((await svc.countWorkflowExecutions({ namespace, query: `${query} AND ExecutionStatus = "Running"` })).count ?? 0);
  if (count === 0) return 0;
  const jobId = `bench-cleanup-${randomBytes(6).toString('hex')}`;
  await svc.startBatchOperation({
    namespace,
    jobId,
    visibilityQuery: `${query} AND ExecutionStatus = "Running"`,
    reason: 'docent benchmark clean-up',
    terminationOperation: { identity: 'docent-bench' },
  });
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const d = await svc.describeBatchOperation({ namespace, jobId });
    if (Number(d.state) !== 1) break; // 1 = BATCH_OPERATION_STATE_RUNNING
    await new Promise((r) => setTimeout(r, 500));
  }
  return count;
}

/** Deletes this run's indexes by name (Elasticsearch 8 refuses wildcard deletes by default). */
export async function deleteIndexes(es: import('@elastic/elasticsearch').Client, prefix: string): Promise<void> {
  const names = Object.keys(await es.indices.get({ index: `${prefix}-*` }).catch(() => ({})));
  if (names.length) await es.indices.delete({ index: names.join(',') });
}
