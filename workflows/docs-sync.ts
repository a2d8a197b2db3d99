import { ApplicationFailure, defineQuery, isCancellation, proxyActivities, setHandler, type RetryPolicy } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DOCS_SYNC_NON_RETRYABLE, DOCS_SYNC_PROGRESS_QUERY, type DocsSyncInput, type DocsSyncProgress, type DocsSyncResult } from './docs-sync-contract';

export const docsSyncProgress = defineQuery<DocsSyncProgress>(DOCS_SYNC_PROGRESS_QUERY);

const retry: RetryPolicy = { maximumAttempts: 5, initialInterval: '2 seconds', nonRetryableErrorTypes: [...DOCS_SYNC_NON_RETRYABLE] };

// The build clones, diffs and embeds the changed pages: it heartbeats, so a silent worker is noticed within a minute.
const { syncDocsIndex } = proxyActivities<Activities>({ startToCloseTimeout: '30 minutes', heartbeatTimeout: '1 minute', retry });
const { publishDocsIndex } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry });

/** One sync of a followed docs repository: an index built from the last one plus the changed pages, then the alias flipped. */
export async function docsSync(input: DocsSyncInput): Promise<DocsSyncResult> {
  let progress: DocsSyncProgress = { phase: 'syncing' };
  setHandler(docsSyncProgress, () => progress);
  try {
    const result = await syncDocsIndex(input);
    if (!result.unchanged) {
      progress = { phase: 'publishing', result };
      // The index it replaces stays until the next sync, so a search that resolved the alias just before still finishes.
      await publishDocsIndex({ domain: input.domain, index: result.index, keepServed: true });
    }
    progress = { phase: 'done', result };
    return result;
  } catch (err) {
    if (isCancellation(err)) throw err;
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
    progress = { ...progress, phase: 'failed', error: cause instanceof Error ? cause.message : String(cause) };
    throw ApplicationFailure.nonRetryable(progress.error ?? 'sync failed', 'DocsSyncFailed');
  }
}
