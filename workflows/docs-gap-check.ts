import { CancellationScope, patched, proxyActivities, type RetryPolicy } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { previewDomain, type DocsGapCheckInput, type GapCheckResult } from './docs-gap-check-contract';

const retry: RetryPolicy = { maximumAttempts: 5, initialInterval: '2 seconds', nonRetryableErrorTypes: ['DocsSourceNotFound', 'NoDocsFound', 'InvalidDocsSource'] };
// Cloning and indexing the branch's docs is the long step: it heartbeats like the docs ingestion.
const { buildPreviewIndex } = proxyActivities<Activities>({ startToCloseTimeout: '30 minutes', heartbeatTimeout: '1 minute', retry });
const { publishDocsIndex, reAskQuestions, recordGapCheck, commentOnPullRequest, removePreviewIndex } = proxyActivities<Activities>({ startToCloseTimeout: '2 minutes', retry });

/**
 * The gap loop's proof: ingests the pushed branch's docs into a preview index (an alias of the job's own), re-asks the
 * questions against the live docs and the preview, and records before/after on the job and on the pull request.
 */
export async function docsGapCheck(input: DocsGapCheckInput): Promise<GapCheckResult> {
  const preview = previewDomain(input.jobId);
  // Added later still: the preview goes whatever happens, a failed step or a cancellation included.
  const removeAlways = patched('remove-preview-in-finally');
  try {
    return await checkAgainstPreview(input, preview, removeAlways);
  } finally {
    if (removeAlways) await CancellationScope.nonCancellable(() => removePreviewIndex({ domain: preview }));
  }
}

async function checkAgainstPreview(input: DocsGapCheckInput, preview: string, removedInFinally: boolean): Promise<GapCheckResult> {
  const built = await buildPreviewIndex({
    jobId: input.jobId,
    domain: input.spec.domain,
    repository: input.repository,
    forgeId: input.forgeId,
    commit: input.commit,
    docsPath: input.spec.docsPath,
    baseUrl: input.spec.baseUrl,
  });
  const published = await publishDocsIndex({ domain: preview, index: built.index });
  const questions = await reAskQuestions({ domain: input.spec.domain, previewDomain: preview, questions: input.spec.questions });
  const result: GapCheckResult = {
    turn: input.turn,
    commit: input.commit,
    previewIndex: published.alias,
    checkedAt: new Date().toISOString(),
    questions,
    fixed: questions.filter((q) => !q.before.answered && q.after.answered).length,
  };
  await recordGapCheck({ jobId: input.jobId, result });
  await commentOnPullRequest({ repository: input.repository, forgeId: input.forgeId, pullRequest: input.pullRequest.number, jobId: input.jobId, result });
  // Added after the first checks ran: the preview has served its purpose once the result is recorded.
  if (!removedInFinally && patched('remove-preview-after-check')) await removePreviewIndex({ domain: preview });
  return result;
}
