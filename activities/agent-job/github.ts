import { inertMarkdown } from '../../src/github/inert-markdown';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { GitHubAppRefused, statusOf } from '../../src/github/github-errors';
import type { Forge } from '../../src/forges/forge';
import type { ForgeRegistry } from '../../src/forges/forge-registry';
import { GitAccessRefused, resolveRepository } from '../../src/git/access';
import type { CheckResult, OpenPullRequestInput, OpenPullRequestResult, ReportChecksInput, ReportChecksResult } from '../../workflows/agent-job-contract';
import type { JobIssue } from '../../src/jobs/job';
import { answerIssue, closingLine } from './issue-answer';

// What a turn shows on its forge: its pull request's description and its checks' report.

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

/** Until when a call the forge rate-limited may be retried inside this attempt: a few seconds before its timeout. */
function attemptDeadline(): number {
  try {
    const { info } = Context.current();
    return info.currentAttemptScheduledTimestampMs + info.startToCloseTimeoutMs - 5000;
  } catch {
    return 0;
  }
}

/** A rate limit this attempt could not wait out: the activity's next attempt tries again. */
function rateLimited(err: unknown): boolean {
  const status = statusOf(err);
  const headers = (err as { response?: { headers?: Record<string, string | undefined> } }).response?.headers ?? {};
  return (status === 403 || status === 429) && (headers['retry-after'] !== undefined || headers['x-ratelimit-remaining'] === '0');
}

function unavailable(err: unknown, what: string, forge: string): never {
  const status = statusOf(err);
  if (rateLimited(err)) throw ApplicationFailure.create({ type: 'GitHubUnavailable', message: `${forge} asked docent to slow down (HTTP ${status})` });
  if (err instanceof GitHubAppRefused) throw ApplicationFailure.create({ type: 'RepositoryAccessDenied', message: err.message, nonRetryable: true });
  if (status !== undefined && status >= 400 && status < 500 && status !== 429) {
    throw ApplicationFailure.create({ type: 'PullRequestRejected', message: `${forge} refused to ${what} (HTTP ${status})`, nonRetryable: true });
  }
  throw ApplicationFailure.create({ type: 'GitHubUnavailable', message: `${forge} did not answer (${status ?? 'network error'})` });
}

export function createGitHubActivities(deps: GitHubDeps) {
  async function forgeOf(forgeId: string | undefined): Promise<Forge> {
    return deps.forges.forgeOf(forgeId).catch((err: unknown) => {
      if (err instanceof GitAccessRefused) throw ApplicationFailure.create({ type: 'RepositoryAccessDenied', message: err.message, nonRetryable: true });
      throw err;
    });
  }

  async function clientFor(forge: Forge, repository: string) {
    const { owner, name } = resolveRepository(repository, deps.gitBaseUrl);
    return forge.repository(owner, name, attemptDeadline);
  }

  async function openOnly(input: OpenPullRequestInput, issue: JobIssue | null, forge: Forge): Promise<OpenPullRequestResult> {
    try {
      const client = await clientFor(forge, input.repository);
      return await client.openPullRequest({
        head: input.branch,
        base: input.baseRef,
        title: input.title,
        body: (draft) => `${pullRequestBody(input.body, input.checks, draft)}${issue ? closingLine(issue) : ''}`,
        draft: input.draft,
        checksFailing: input.checks?.some((c) => c.exitCode !== 0) === true,
      });
    } catch (err) {
      unavailable(err, 'open the pull request', forge.displayName);
    }
  }

  return {
    /**
     * Opens the job branch's pull request, or returns the one already open for it: never a second one. Where the forge
     * has no drafts, a pull request that should have been a draft opens ready, titled `[checks failing]`.
     */
    async openPullRequest(input: OpenPullRequestInput): Promise<OpenPullRequestResult> {
      // An issue's job: the pull request closes the issue, and the issue is told where it is (once; a retry finds the answer).
      const answering = (await deps.issueOfBranch?.(input.branch)) ?? null;
      const forge = await forgeOf(input.forgeId);
      const opened = await openOnly(input, answering?.issue ?? null, forge);
      if (answering) await answerIssue(await clientFor(forge, answering.issue.repository), answering.issue, answering.jobId, opened.url);
      return opened;
    },

    /**
     * Shows the checks of a pushed commit on the forge. GitHub with the App: the check run `docent` (created in
     * progress, then completed; a retry finds it and completes it, never a second one). Else the commit status `docent`.
     */
    async reportChecks(input: ReportChecksInput): Promise<ReportChecksResult> {
      const forge = await forgeOf(input.forgeId);
      try {
        const client = await clientFor(forge, input.repository);
        const reported = await client.reportChecks({
          commit: input.commit,
          conclusion: passedAll(input.checks) ? 'success' : 'failure',
          headline: checksHeadline(input.checks),
          output: checkRunOutput(input.checks),
        });
        return { reported };
      } catch (err) {
        const status = statusOf(err);
        // A token or installation without the permission: the pull request body still lists the checks.
        if (!rateLimited(err) && (status === 403 || status === 404 || status === 422)) return { reported: 'none' };
        unavailable(err, 'report the checks', forge.displayName);
      }
    },
  };
}
