import { inertMarkdown } from '../../src/github/inert-markdown';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Octokit } from '@octokit/rest';
import { GitHubAppRefused, statusOf } from '../../src/github/github-errors';
import type { ForgeRegistry } from '../../src/forges/forge-registry';
import { GitAccessRefused, resolveRepository } from '../../src/git/access';
import type { CheckResult, OpenPullRequestInput, OpenPullRequestResult, ReportChecksInput, ReportChecksResult } from '../../workflows/agent-job-contract';
import type { JobIssue } from '../../src/jobs/job';
import { answerIssue, closingLine } from './issue-answer';

// What a turn shows on GitHub: its pull request's description and its checks' report.

/** How long a command ran, as a person reads it. */
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function verdict(c: CheckResult): string {
  if (c.exitCode === 0) return `passed in ${seconds(c.durationMs)}`;
  if (c.stoppedBy === 'timeout') return `**stopped at the time limit** after ${seconds(c.durationMs)}`;
  if (c.stoppedBy === 'disk') return `**stopped for using too much disk** after ${seconds(c.durationMs)}`;
  return `**failed** (exit ${c.exitCode}) after ${seconds(c.durationMs)}`;
}

/** A code fence longer than any run of backticks in the text, so command output cannot end it early. */
function fenced(text: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}\n${text.trimEnd()}\n${fence}`;
}

/** The pull request's description: the agent's summary, then every setup and check command it ran, failures with their output. */
function pullRequestBody(agentSummary: string, checks: CheckResult[] | undefined, draft = true): string {
  // The agent's words, shown as written: no link, image or HTML of its own (src/github/inert-markdown.ts).
  const summary = inertMarkdown(agentSummary);
  if (!checks?.length) return summary;
  const bad = checks.filter((c) => c.exitCode !== 0);
  const lines = checks.map((c) => `- ${c.exitCode === 0 ? '✅' : '❌'} ${c.kind} \`${c.command}\`: ${verdict(c)}`);
  // A repository without drafts gets a ready pull request titled [checks failing] instead.
  const marked = draft ? 'so this pull request is a draft' : 'so this pull request is not ready for review';
  const heading = bad.length ? `### Checks: ${bad.length} of ${checks.length} failed, ${marked}` : `### Checks: all ${checks.length} passed`;
  const outputs = bad.map(
    (c) => `<details><summary>Output of <code>${c.command.replace(/[<&]/g, (ch) => (ch === '<' ? '&lt;' : '&amp;'))}</code> (last 4 KiB)</summary>\n\n${fenced(c.output)}\n\n</details>`,
  );
  return [summary, '', heading, '', ...lines, ...(outputs.length ? ['', ...outputs] : []), '', '_Run by docent in a sandbox without network unless the project allows it._'].join('\n');
}

/** GitHub's limit on a check run's `summary` and `text` (docs.github.com/rest/checks/runs). */
const maxOutputChars = 65_535;

const checkRunName = 'docent';

const passedAll = (checks: CheckResult[]) => checks.every((c) => c.exitCode === 0);

/** One line for a commit status (GitHub keeps 140 characters) or a check run's title. */
function checksHeadline(checks: CheckResult[]): string {
  const bad = checks.filter((c) => c.exitCode !== 0).length;
  return bad ? `${bad} of ${checks.length} checks failed` : `all ${checks.length} checks passed`;
}

const clip = (text: string) => (text.length <= maxOutputChars ? text : `${text.slice(0, maxOutputChars - 40)}\n\n… (cut at GitHub's size limit)`);

/** A completed check run's output: a line per command, then the tail of each command's output, failures first. */
export function checkRunOutput(checks: CheckResult[]): { title: string; summary: string; text: string } {
  const summary = checks.map((c) => `- ${c.exitCode === 0 ? '✅' : '❌'} ${c.kind} \`${c.command}\`: ${verdict(c)}`).join('\n');
  const ordered = [...checks.filter((c) => c.exitCode !== 0), ...checks.filter((c) => c.exitCode === 0)];
  const text = ordered.map((c) => `#### \`${c.command}\` (${c.kind}, exit ${c.exitCode})\n\nThe end of its output:\n\n${fenced(c.output || '(no output)')}`).join('\n\n');
  return { title: checksHeadline(checks), summary: clip(summary), text: clip(text) };
}

export interface GitHubDeps {
  gitBaseUrl: string;
  /** The forge connections whose credentials reach each job's repository (src/forges/). */
  forges: ForgeRegistry;
  /** The job a branch names (`<prefix><jobId>`) and the issue it answers, if any (an `issue` automation's job). */
  issueOfBranch?(branch: string): Promise<{ jobId: string; issue: JobIssue } | null>;
}

/** Until when a call GitHub rate-limited may be retried inside this attempt: a few seconds before its timeout. */
function attemptDeadline(): number {
  try {
    const { info } = Context.current();
    return info.currentAttemptScheduledTimestampMs + info.startToCloseTimeoutMs - 5000;
  } catch {
    return 0;
  }
}

/** GitHub's answer when a repository (its plan or its owner's) has no draft pull requests. */
function draftsUnavailable(err: unknown): boolean {
  const data = (err as { response?: { data?: { message?: string; errors?: Array<{ message?: string }> } } }).response?.data;
  return [data?.message, ...(data?.errors ?? []).map((e) => e.message)].some((m) => typeof m === 'string' && /draft/i.test(m));
}

/** A rate limit this attempt could not wait out: the activity's next attempt tries again. */
function rateLimited(err: unknown): boolean {
  const status = statusOf(err);
  const headers = (err as { response?: { headers?: Record<string, string | undefined> } }).response?.headers ?? {};
  return (status === 403 || status === 429) && (headers['retry-after'] !== undefined || headers['x-ratelimit-remaining'] === '0');
}

function unavailable(err: unknown, what: string): never {
  const status = statusOf(err);
  if (rateLimited(err)) throw ApplicationFailure.create({ type: 'GitHubUnavailable', message: `GitHub asked docent to slow down (HTTP ${status})` });
  if (err instanceof GitHubAppRefused) throw ApplicationFailure.create({ type: 'RepositoryAccessDenied', message: err.message, nonRetryable: true });
  if (status !== undefined && status >= 400 && status < 500 && status !== 429) {
    throw ApplicationFailure.create({ type: 'PullRequestRejected', message: `GitHub refused to ${what} (HTTP ${status})`, nonRetryable: true });
  }
  throw ApplicationFailure.create({ type: 'GitHubUnavailable', message: `GitHub did not answer (${status ?? 'network error'})` });
}

export function createGitHubActivities(deps: GitHubDeps) {
  async function clientFor(repository: string, forgeId: string | undefined) {
    const { owner, name: repo } = resolveRepository(repository, deps.gitBaseUrl);
    const credentials = await deps.forges.githubOf(forgeId).catch((err: unknown) => {
      if (err instanceof GitAccessRefused) throw ApplicationFailure.create({ type: 'RepositoryAccessDenied', message: err.message, nonRetryable: true });
      throw err;
    });
    return { owner, repo, ...(await credentials.access(owner, repo, attemptDeadline)) };
  }

  /** The open pull request of the branch, read page by page (GitHub ignores a `head` filter it cannot parse). */
  async function findOpen(octokit: Octokit, owner: string, repo: string, branch: string) {
    for await (const { data } of octokit.paginate.iterator(octokit.rest.pulls.list, { owner, repo, head: `${owner}:${branch}`, state: 'open', per_page: 100 })) {
      const pr = data.find((p) => p.head.ref === branch);
      if (pr) return { url: pr.html_url, number: pr.number };
    }
    return null;
  }

  async function openOnly(input: OpenPullRequestInput, issue: JobIssue | null): Promise<OpenPullRequestResult> {
    let client: Awaited<ReturnType<typeof clientFor>> | undefined;
    try {
      client = await clientFor(input.repository, input.forgeId);
      const { octokit, owner, repo } = client;
      const existing = await findOpen(octokit, owner, repo, input.branch);
      if (existing) return existing;
      const create = async (draft: boolean, title: string) => {
        const body = `${pullRequestBody(input.body, input.checks, draft)}${issue ? closingLine(issue) : ''}`;
        const { data } = await octokit.rest.pulls.create({ owner, repo, head: input.branch, base: input.baseRef, title, body, draft });
        return { url: data.html_url, number: data.number };
      };
      try {
        return await create(input.draft, input.title);
      } catch (err) {
        if (statusOf(err) !== 422 || !input.draft || !draftsUnavailable(err)) throw err;
        const failing = input.checks?.some((c) => c.exitCode !== 0);
        return await create(false, failing ? `[checks failing] ${input.title}` : input.title);
      }
    } catch (err) {
      // 422 also means "a pull request already exists" when two attempts race: look again before giving up.
      if (client && statusOf(err) === 422) {
        const existing = await findOpen(client.octokit, client.owner, client.repo, input.branch).catch(() => null);
        if (existing) return existing;
      }
      unavailable(err, 'open the pull request');
    }
  }

  return {
    /**
     * Opens the job branch's pull request, or returns the one already open for it: never a second one. Where GitHub
     * has no drafts (422), a pull request that should have been a draft opens ready, titled `[checks failing]`.
     */
    async openPullRequest(input: OpenPullRequestInput): Promise<OpenPullRequestResult> {
      // An issue's job: the pull request closes the issue, and the issue is told where it is (once; a retry finds the answer).
      const answering = (await deps.issueOfBranch?.(input.branch)) ?? null;
      const opened = await openOnly(input, answering?.issue ?? null);
      if (answering) await answerIssue(await clientFor(answering.issue.repository, input.forgeId), answering.issue, answering.jobId, opened.url);
      return opened;
    },

    /**
     * Shows the checks of a pushed commit on GitHub. With the App: the check run `docent` (created in progress, then
     * completed; a retry finds it and completes it, never a second one). With a token: the commit status `docent`.
     */
    async reportChecks(input: ReportChecksInput): Promise<ReportChecksResult> {
      const conclusion = passedAll(input.checks) ? 'success' : 'failure';
      try {
        const { octokit, owner, repo, mode } = await clientFor(input.repository, input.forgeId);
        if (mode === 'token') {
          await octokit.rest.repos.createCommitStatus({ owner, repo, sha: input.commit, state: conclusion, context: checkRunName, description: checksHeadline(input.checks).slice(0, 140) });
          return { reported: 'commit-status' };
        }
        const runs = await octokit.paginate(octokit.rest.checks.listForRef, { owner, repo, ref: input.commit, check_name: checkRunName, filter: 'latest', per_page: 100 });
        const ours = runs.find((r) => r.head_sha === input.commit && r.name === checkRunName);
        if (ours?.status === 'completed') return { reported: 'check-run' };
        const id = ours?.id ?? (await octokit.rest.checks.create({ owner, repo, name: checkRunName, head_sha: input.commit, status: 'in_progress', started_at: new Date().toISOString() })).data.id;
        await octokit.rest.checks.update({ owner, repo, check_run_id: id, status: 'completed', conclusion, completed_at: new Date().toISOString(), output: checkRunOutput(input.checks) });
        return { reported: 'check-run' };
      } catch (err) {
        const status = statusOf(err);
        // A token or installation without the permission: the pull request body still lists the checks.
        if (!rateLimited(err) && (status === 403 || status === 404 || status === 422)) return { reported: 'none' };
        unavailable(err, 'report the checks');
      }
    },
  };
}
