import { ApplicationFailure, defineQuery, isCancellation, proxyActivities, setHandler, type RetryPolicy } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DOCS_SYNC_NON_RETRYABLE, DOCS_SYNC_PROGRESS_QUERY, type DocsSyncInput, type DocsSyncProgress, type DocsSyncResult } from './docs-sync-contract';

export const docsSyncProgress = defineQuery<DocsSyncProgress>(DOCS_SYNC_PROGRESS_QUERY);

const retry: RetryPolicy = { maximumAttempts: 5, initialInterval: '2 seconds', nonRetryableErrorTypes: [...DOCS_SYNC_NON_RETRYABLE] };

// The build clones, diffs and embeds the changed pages: it heartbeats, so a silent worker is noticed within a minute.
const { syncDocsIndex } = proxyActivities<Activities>({ startToCloseTimeout: '30 minutes', heartbeatTimeout: '1 minute', retry });
// Publishing deletes the passages readers no longer see: a few pages' worth, or a whole index.
const { publishSyncedIndex } = proxyActivities<Activities>({ startToCloseTimeout: '5 minutes', retry });

/** One sync of a followed docs source: the changed pages added to the index unseen, then readers switched to them at once. */
export async function docsSync(input: DocsSyncInput): Promise<DocsSyncResult> {
  let progress: DocsSyncProgress = { phase: 'syncing' };
  setHandler(docsSyncProgress, () => progress);
  try {
    const result = await syncDocsIndex(input);
    progress = { phase: 'publishing', result };
    // Also when nothing changed: a publish that failed after the last build is completed now.
    await publishSyncedIndex({ domain: input.domain, index: result.index });
    progress = { phase: 'done', result };
    return result;
  } catch (err) {
    if (isCancellation(err)) throw err;
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
    progress = { ...progress, phase: 'failed', error: cause instanceof Error ? cause.message : String(cause) };
    throw ApplicationFailure.nonRetryable(progress.error ?? 'sync failed', 'DocsSyncFailed');
  }
}
