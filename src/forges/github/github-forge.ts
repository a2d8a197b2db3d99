// The `github` kind behind the forge interface (src/forges/forge.ts): github.com and GitHub Enterprise Server, with a
// token or an installation of the deployment's GitHub App. Credentials (tokens, installation tokens, rate limits)
// stay in src/github/credentials.ts; this module makes the API calls docent needs with them.
import type { IncomingHttpHeaders } from 'node:http';
import type { Octokit } from '@octokit/rest';
import type { GitHubCredentials } from '../../github/credentials';
import { statusOf } from '../../github/github-errors';
import { signatureMatches } from '../../github/webhook-secrets';
import type { ChecksReport, Forge, ForgeRepository, ForgeWebhooks, NewPullRequest, PullRequestRef, ReactionTarget, RepositoryPermission } from '../forge';

/** The name of docent's check run and commit status. */
const checkRunName = 'docent';

/** Base levels that may push: `maintain` and write-based custom roles report `write`. */
const writers: ReadonlySet<string> = new Set(['admin', 'write']);

const header = (headers: IncomingHttpHeaders, name: string) => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** GitHub's answer when a repository (its plan or its owner's) has no draft pull requests. */
function draftsUnavailable(err: unknown): boolean {
  const data = (err as { response?: { data?: { message?: string; errors?: Array<{ message?: string }> } } }).response?.data;
  return [data?.message, ...(data?.errors ?? []).map((e) => e.message)].some((m) => typeof m === 'string' && /draft/i.test(m));
}

/** GitHub's webhooks: `X-Hub-Signature-256` over the raw body, `X-GitHub-Delivery` and `X-GitHub-Event`; payloads as docent reads them. */
export const githubWebhooks: ForgeWebhooks = {
  signatureHeader: 'X-Hub-Signature-256',
  async verify(secret, body, headers) {
    const signature = header(headers, 'x-hub-signature-256');
    return signature !== undefined && (await signatureMatches(secret, body, signature));
  },
  read: (headers) => ({ id: header(headers, 'x-github-delivery'), event: header(headers, 'x-github-event') }),
  normalize: (event, payload) => ({ event, payload }),
};

class GitHubRepository implements ForgeRepository {
  constructor(
    private readonly octokit: Octokit,
    readonly owner: string,
    readonly name: string,
    private readonly mode: 'app' | 'token',
  ) {}

  private get repo() {
    return { owner: this.owner, repo: this.name };
  }

  /** Read page by page: GitHub ignores a `head` filter it cannot parse. */
  async openPullRequestOf(branch: string): Promise<PullRequestRef | null> {
    const { octokit } = this;
    for await (const { data } of octokit.paginate.iterator(octokit.rest.pulls.list, { ...this.repo, head: `${this.owner}:${branch}`, state: 'open', per_page: 100 })) {
      const pr = data.find((p) => p.head.ref === branch);
      if (pr) return { url: pr.html_url, number: pr.number };
    }
    return null;
  }

  async openPullRequest(pr: NewPullRequest): Promise<PullRequestRef> {
    const existing = await this.openPullRequestOf(pr.head);
    if (existing) return existing;
    const create = async (draft: boolean, title: string) => {
      const { data } = await this.octokit.rest.pulls.create({ ...this.repo, head: pr.head, base: pr.base, title, body: pr.body(draft), draft });
      return { url: data.html_url, number: data.number };
    };
    try {
      try {
        return await create(pr.draft, pr.title);
      } catch (err) {
        // Where GitHub has no drafts (422): ready, titled so.
        if (statusOf(err) !== 422 || !pr.draft || !draftsUnavailable(err)) throw err;
        return await create(false, pr.checksFailing ? `[checks failing] ${pr.title}` : pr.title);
      }
    } catch (err) {
      // 422 also means "a pull request already exists" when two attempts race: look again before giving up.
      if (statusOf(err) === 422) {
        const raced = await this.openPullRequestOf(pr.head).catch(() => null);
        if (raced) return raced;
      }
      throw err;
    }
  }

  async pullRequest(number: number) {
    try {
      const { data } = await this.octokit.rest.pulls.get({ ...this.repo, pull_number: number });
      return { open: data.state === 'open', merged: data.merged === true, headRef: data.head.ref, headRepository: data.head.repo?.full_name ?? null, url: data.html_url };
    } catch (err) {
      if (statusOf(err) === 404) return null;
      throw err;
    }
  }

  /** As GitHub serves it (`application/vnd.github.diff`). */
  async pullRequestDiff(number: number): Promise<string> {
    const { data } = await this.octokit.rest.pulls.get({ ...this.repo, pull_number: number, mediaType: { format: 'diff' } });
    return String(data);
  }

  async comments(number: number) {
    const all = await this.octokit.paginate(this.octokit.rest.issues.listComments, { ...this.repo, issue_number: number, per_page: 100 });
    return all.map((c) => ({ id: c.id, body: c.body ?? '' }));
  }

  async comment(number: number, body: string) {
    const { data } = await this.octokit.rest.issues.createComment({ ...this.repo, issue_number: number, body });
    return { id: data.id };
  }

  async react(target: ReactionTarget): Promise<void> {
    const { reactions } = this.octokit.rest;
    if (target.kind === 'issue') await reactions.createForIssue({ ...this.repo, issue_number: target.number, content: 'eyes' });
    else if (target.kind === 'comment') await reactions.createForIssueComment({ ...this.repo, comment_id: target.id, content: 'eyes' });
    else await reactions.createForPullRequestReviewComment({ ...this.repo, comment_id: target.id, content: 'eyes' });
  }

  /**
   * GET /repos/{owner}/{repo}/collaborators/{username}/permission. A comment's `author_association` is not asked: an
   * organisation member on a public repository, or a read or triage collaborator, is MEMBER or COLLABORATOR without write access.
   */
  async permission(login: string): Promise<RepositoryPermission> {
    try {
      const { data } = await this.octokit.rest.repos.getCollaboratorPermissionLevel({ ...this.repo, username: login });
      return { push: writers.has(data.permission), role: data.role_name ?? data.permission };
    } catch (err) {
      // GitHub's 404: no such user (a non-collaborator gets 200 with read or none).
      if (statusOf(err) === 404) return { push: false, role: 'none' };
      throw err;
    }
  }

  /**
   * With the App: the check run `docent` (created in progress, then completed; a retry finds it and completes it, never
   * a second one). With a token: the commit status `docent`.
   */
  async reportChecks(report: ChecksReport) {
    const { octokit } = this;
    if (this.mode === 'token') {
      await octokit.rest.repos.createCommitStatus({ ...this.repo, sha: report.commit, state: report.conclusion, context: checkRunName, description: report.headline.slice(0, 140) });
      return 'commit-status' as const;
    }
    const runs = await octokit.paginate(octokit.rest.checks.listForRef, { ...this.repo, ref: report.commit, check_name: checkRunName, filter: 'latest', per_page: 100 });
    const ours = runs.find((r) => r.head_sha === report.commit && r.name === checkRunName);
    if (ours?.status === 'completed') return 'check-run' as const;
    const id = ours?.id ?? (await octokit.rest.checks.create({ ...this.repo, name: checkRunName, head_sha: report.commit, status: 'in_progress', started_at: new Date().toISOString() })).data.id;
    await octokit.rest.checks.update({ ...this.repo, check_run_id: id, status: 'completed', conclusion: report.conclusion, completed_at: new Date().toISOString(), output: report.output });
    return 'check-run' as const;
  }
}

/** A GitHub connection behind the forge interface. */
export class GitHubForge implements Forge {
  readonly kind = 'github' as const;
  readonly displayName = 'GitHub';
  readonly pushRoles = 'write, maintain or admin';
  readonly webhooks = githubWebhooks;

  constructor(
    /** The connection's credentials (kept per process by src/forges/forge-registry.ts, so installation tokens stay cached). */
    readonly credentials: GitHubCredentials,
  ) {}

  reach(owner: string, name: string) {
    return this.credentials.reach(owner, name);
  }

  async gitPassword(owner: string, name: string, opts: { readOnly?: boolean } = {}): Promise<string | undefined> {
    return opts.readOnly ? this.credentials.readOnlyGitToken(owner, name) : (await this.credentials.access(owner, name)).gitToken;
  }

  async repository(owner: string, name: string, retryWindow?: () => number): Promise<ForgeRepository> {
    const { octokit, mode } = await this.credentials.access(owner, name, retryWindow);
    return new GitHubRepository(octokit, owner, name, mode);
  }

  /** GitHub's webhooks are the operator's to set (an App's come with it; a repository's need admin): docent does not. */
  async registerWebhook(): Promise<boolean> {
    return false;
  }
}
