import { ApplicationFailure, defineQuery, isCancellation, proxyActivities, setHandler, type RetryPolicy } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DOCS_INGEST_NON_RETRYABLE, DOCS_INGEST_PROGRESS_QUERY, type DocsIngestInput, type DocsIngestProgress } from './docs-ingest-contract';

export const docsIngestProgress = defineQuery<DocsIngestProgress>(DOCS_INGEST_PROGRESS_QUERY);

const retry: RetryPolicy = { maximumAttempts: 5, initialInterval: '2 seconds', nonRetryableErrorTypes: [...DOCS_INGEST_NON_RETRYABLE] };

// Building clones, parses and bulk-indexes: long, so it heartbeats and a silent worker is noticed within a minute.
const { buildDocsIndex } = proxyActivities<Activities>({ startToCloseTimeout: '30 minutes', heartbeatTimeout: '1 minute', retry });
const { publishDocsIndex } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry });

/** Ingests a domain's docs into a new index and swaps the alias to it; unchanged docs end after the hash check. */
export async function docsIngest(input: DocsIngestInput): Promise<DocsIngestProgress> {
  let progress: DocsIngestProgress = { phase: 'building' };
  setHandler(docsIngestProgress, () => progress);
  try {
    const built = await buildDocsIndex(input);
    progress = { phase: 'publishing', pages: built.pages, chunks: built.chunks, index: built.index, unchanged: built.unchanged, embedded: built.embedded };
    const published = await publishDocsIndex({ domain: input.domain, index: built.index });
    progress = { ...progress, phase: 'done', deletedIndexes: published.deletedIndexes };
    return progress;
  } catch (err) {
    if (isCancellation(err)) throw err;
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
    progress = { ...progress, phase: 'failed', error: cause instanceof Error ? cause.message : String(cause) };
    throw ApplicationFailure.nonRetryable(progress.error ?? 'ingestion failed', 'DocsIngestFailed');
  }
}
