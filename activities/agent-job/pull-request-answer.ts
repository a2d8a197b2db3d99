import { ApplicationFailure } from '@temporalio/activity';
import type { ForgeRegistry } from '../../src/forges/forge-registry';
import { repositoryOn } from '../../src/forges/forge-repository';
import { inertMarkdown } from '../../src/github/inert-markdown';
import { answerMarker } from '../../src/github/mentions';
import type { AnswerPullRequestInput, TurnEnding } from '../../workflows/agent-job-contract';

/** GitHub refuses comments longer than this; the summary is cut to leave room for the rest. */
const maxSummaryChars = 60_000;

/** The answer's text: what the turn changed (with the commit's link) or why it changed nothing. Model text never mentions anyone. */
export function answerText(input: AnswerPullRequestInput): string {
  return `${describeEnding(input.ending, input.reply.pullRequestUrl)}\n\n${answerMarker(input.jobId, input.turn, input.attempt)}`;
}

function describeEnding(ending: TurnEnding, pullRequestUrl: string): string {
  if (ending.kind === 'failed') return `This instruction failed (\`${ending.error.code}\`): ${inertMarkdown(ending.error.message)}`;
  const summary = inertMarkdown(ending.summary.slice(0, maxSummaryChars)).trim();
  if (ending.kind === 'unchanged') return `I changed nothing.${summary ? `\n\n${summary}` : ''}`;
  const short = ending.commit.slice(0, 7);
  const failing = ending.checksPassed === false ? "\n\nThe project's checks still fail on this commit." : '';
  return `Pushed [\`${short}\`](${pullRequestUrl}/commits/${ending.commit}): ${inertMarkdown(ending.title)}${summary ? `\n\n${summary}` : ''}${failing}`;
}

const statusOf = (err: unknown) => (typeof err === 'object' && err !== null && typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : undefined);

export function createPullRequestAnswerActivities(deps: { forges: ForgeRegistry; gitUrl: string }) {
  return {
    /** Comments the turn's answer on its pull request, once: a retry finds the answer an earlier attempt posted. */
    async answerPullRequestComment(input: AnswerPullRequestInput): Promise<{ commentId: number }> {
      const forge = await deps.forges.forgeOf(input.reply.forgeId);
      const client = await repositoryOn(forge, input.reply.repository);
      const marker = answerMarker(input.jobId, input.turn, input.attempt);
      try {
        const earlier = await client.comments(input.reply.pullNumber, input.reply.thread);
        const posted = earlier.find((c) => c.body.includes(marker));
        if (posted) return { commentId: posted.id };
        return { commentId: (await client.comment(input.reply.pullNumber, answerText(input), input.reply.thread)).id };
      } catch (err) {
        const status = statusOf(err);
        if (status !== undefined && status >= 400 && status < 500 && status !== 429) {
          throw ApplicationFailure.create({ type: 'PullRequestRejected', message: `${forge.displayName} refused the answer (HTTP ${status})`, nonRetryable: true });
        }
        throw err;
      }
    },
  };
}
