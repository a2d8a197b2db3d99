import { ApplicationFailure } from '@temporalio/activity';
import { Octokit } from '@octokit/rest';
import { resolveRepository } from '../../src/jobs/repository';
import type { OpenPullRequestInput, OpenPullRequestResult } from '../../workflows/agent-job-contract';
import { pullRequestBody } from './pull-request-body';

export interface GitHubDeps {
  apiUrl: string;
  gitBaseUrl: string;
  token?: string;
}

function statusOf(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null && typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : undefined;
}

export function createGitHubActivities(deps: GitHubDeps) {
  // Temporal retries the activity; the client itself does not.
  const octokit = new Octokit({ auth: deps.token, baseUrl: deps.apiUrl, userAgent: 'docent', request: { retries: 0 } });

  async function findOpen(owner: string, repo: string, branch: string) {
    const { data } = await octokit.rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: 'open', per_page: 1 });
    return data[0] ? { url: data[0].html_url, number: data[0].number } : null;
  }

  return {
    /** Opens the job branch's pull request, or returns the one already open for it: never a second one. */
    async openPullRequest(input: OpenPullRequestInput): Promise<OpenPullRequestResult> {
      const { owner, name: repo } = resolveRepository(input.repository, deps.gitBaseUrl);
      try {
        const existing = await findOpen(owner, repo, input.branch);
        if (existing) return existing;
        const body = pullRequestBody(input.body, input.checks);
        const { data } = await octokit.rest.pulls.create({ owner, repo, head: input.branch, base: input.baseRef, title: input.title, body, draft: input.draft });
        return { url: data.html_url, number: data.number };
      } catch (err) {
        const status = statusOf(err);
        // 422 also means "a pull request already exists" when two attempts race: look again before giving up.
        if (status === 422) {
          const existing = await findOpen(owner, repo, input.branch);
          if (existing) return existing;
        }
        if (status !== undefined && status >= 400 && status < 500 && status !== 429) {
          throw ApplicationFailure.create({ type: 'PullRequestRejected', message: `GitHub refused to open the pull request (HTTP ${status})`, nonRetryable: true });
        }
        throw ApplicationFailure.create({ type: 'GitHubUnavailable', message: `GitHub did not answer (${status ?? 'network error'})` });
      }
    },
  };
}
