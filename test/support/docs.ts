import { readdir, readFile } from 'node:fs/promises';
import { installTestRuntime } from './temporal-runtime';
import path from 'node:path';
import { createEsClient } from '../../src/search/es-client';
import { runDocsIngest } from '../../src/cli/docs-ingest';
import type { Config } from '../../src/config';
import { buildWorkers, type BuildWorkersOptions, type WorkerSet } from '../../src/worker-build';

export const npmDocsFolder = path.resolve(__dirname, '../fixtures/docs/npm');
export const miniDocsFolder = path.resolve(__dirname, '../fixtures/docs/mini');

export interface RunningWorker {
  set: WorkerSet;
  stop(): Promise<void>;
}

/** A real worker polling this test's task queues (docs ingestion runs through Temporal, never around it). */
export async function startWorker(config: Config, options: Pick<BuildWorkersOptions, 'activityInterceptors' | 'embedder'> = {}): Promise<RunningWorker> {
  installTestRuntime(config);
  const set = await buildWorkers(config, { identity: 'docs-test-worker', ...options });
  const running = set.run();
  return {
    set,
    async stop() {
      set.shutdown();
      await running;
      await set.close();
    },
  };
}

/** Ingests the small fixture docs for a domain through a worker started for just that, then stops it. */
export async function ingestMiniDocs(config: Config, domain: string): Promise<void> {
  const worker = await startWorker(config);
  try {
    await runDocsIngest(config, { domain, source: miniDocsFolder, baseUrl: 'https://kiln.example' }, () => undefined);
  } finally {
    await worker.stop();
  }
}

/** The overrides that make a gateway share a test config's database, indexes and task queues. */
export function sameStack(config: Config, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DOCENT_MONGO_DB: config.mongo.db,
    DOCENT_ES_INDEX_PREFIX: config.elasticsearch.indexPrefix,
    DOCENT_TASK_QUEUE_PREFIX: config.temporal.taskQueuePrefix,
    ...extra,
  };
}

/** Deletes the Elasticsearch indexes a test config's ingestion created. */
export async function deleteTestIndexes(config: Config): Promise<void> {
  const es = createEsClient(config.elasticsearch);
  const indexes = Object.keys(await es.indices.get({ index: `${config.elasticsearch.indexPrefix}-*` }).catch(() => ({})));
  if (indexes.length) await es.indices.delete({ index: indexes.join(',') });
  await es.close();
}

/** A folder's files as `{ 'prefix/relative/path': text }`, the shape a test git server's createRepo takes. */
export async function filesOf(dir: string, prefix: string, out: Record<string, string> = {}): Promise<Record<string, string>> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.isDirectory()) await filesOf(path.join(dir, e.name), `${prefix}${e.name}/`, out);
    else out[`${prefix}${e.name}`] = await readFile(path.join(dir, e.name), 'utf8');
  }
  return out;
}
