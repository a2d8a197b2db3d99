import { randomUUID } from 'node:crypto';
import { Webhooks } from '@octokit/webhooks';
import type { PullRequest } from './github-double';
import { poll } from './poll';
import type { HumanComment } from './github-double-conversation';
import type { Issue } from './github-double-issues';

// Webhook deliveries as GitHub sends them (docs.github.com/webhooks/webhook-events-and-payloads): its headers, a body
// signed with the real @octokit/webhooks signer, and payloads with GitHub's field names (the fields docent reads and
// the neighbours GitHub sends beside them).

const repositoryOf = (owner: string, repo: string) => ({
  id: 4242,
  name: repo,
  full_name: `${owner}/${repo}`,
  private: true,
  owner: { login: owner, id: 77, type: 'Organization' },
  html_url: `https://github.test/${owner}/${repo}`,
  default_branch: 'main',
});
const userOf = (login: string) => ({ login, id: login.length * 1000 + 7, type: 'User', site_admin: false });

/** `issue_comment` (created) for a comment on a pull request's conversation. */
export function issueCommentCreated(owner: string, repo: string, pr: PullRequest, c: HumanComment, state: 'open' | 'closed' = 'open') {
  return {
    action: 'created',
    issue: {
      number: pr.number,
      title: pr.title,
      state,
      html_url: pr.html_url,
      user: userOf('docent-bot'),
      pull_request: { url: `https://api.github.test/repos/${owner}/${repo}/pulls/${pr.number}`, html_url: pr.html_url, merged_at: null },
    },
    comment: {
      id: c.id,
      body: c.body,
      html_url: `${pr.html_url}#issuecomment-${c.id}`,
      user: userOf(c.login),
      author_association: c.association,
      created_at: new Date().toISOString(),
    },
    repository: repositoryOf(owner, repo),
    sender: userOf(c.login),
  };
}

/** `pull_request_review_comment` (created) for a comment on a line of the diff. */
export function reviewCommentCreated(owner: string, repo: string, pr: PullRequest, c: HumanComment) {
  return {
    action: 'created',
    comment: {
      id: c.id,
      body: c.body,
      path: c.path,
      line: c.line,
      original_line: c.line,
      side: 'RIGHT',
      diff_hunk: c.diffHunk,
      commit_id: pr.headSha,
      html_url: `${pr.html_url}#discussion_r${c.id}`,
      user: userOf(c.login),
      author_association: c.association,
    },
    pull_request: {
      number: pr.number,
      html_url: pr.html_url,
      state: 'open',
      head: { ref: pr.head, sha: pr.headSha, repo: repositoryOf(owner, repo) },
      base: { ref: pr.base, repo: repositoryOf(owner, repo) },
    },
    repository: repositoryOf(owner, repo),
    sender: userOf(c.login),
  };
}

/** `pull_request` (closed), merged or not. */
export function pullRequestClosed(owner: string, repo: string, pr: PullRequest, merged: boolean) {
  return {
    action: 'closed',
    number: pr.number,
    pull_request: {
      number: pr.number,
      state: 'closed',
      merged,
      merged_at: merged ? new Date().toISOString() : null,
      merge_commit_sha: merged ? pr.headSha : null,
      title: pr.title,
      body: pr.body,
      html_url: pr.html_url,
      head: { label: `${owner}:${pr.head}`, ref: pr.head, sha: pr.headSha, repo: repositoryOf(owner, repo) },
      base: { label: `${owner}:${pr.base}`, ref: pr.base, repo: repositoryOf(owner, repo) },
    },
    repository: repositoryOf(owner, repo),
    sender: userOf('octo-maintainer'),
  };
}

const issueOf = (i: Issue, author: string) => ({
  number: i.number,
  title: i.title,
  body: i.body,
  state: 'open',
  html_url: i.html_url,
  user: userOf(author),
  labels: [] as Array<{ name: string }>,
  assignees: [] as unknown[],
});

/** `issues` labeled: someone put `label` on the issue. */
export function issueLabeled(i: Issue, label: string, sender: string) {
  return { action: 'labeled', issue: { ...issueOf(i, sender), labels: [{ name: label }] }, label: { name: label, color: 'ededed' }, repository: repositoryOf(i.owner, i.repo), sender: userOf(sender) };
}

/** `issues` assigned: someone assigned the issue to `assignee`. */
export function issueAssigned(i: Issue, assignee: string, sender: string) {
  return { action: 'assigned', issue: issueOf(i, sender), assignee: userOf(assignee), repository: repositoryOf(i.owner, i.repo), sender: userOf(sender) };
}

/** `issue_comment` (created) on an issue that is not a pull request. */
export function commentOnIssue(i: Issue, c: { id: number; body: string; login: string; association: string }) {
  return {
    action: 'created',
    issue: issueOf(i, 'octo-member'),
    comment: { id: c.id, body: c.body, html_url: `${i.html_url}#issuecomment-${c.id}`, user: userOf(c.login), author_association: c.association, created_at: new Date().toISOString() },
    repository: repositoryOf(i.owner, i.repo),
    sender: userOf(c.login),
  };
}

/** `push` of commits to `ref` (refs/heads/…), as GitHub lists them (oldest first). */
export function pushed(owner: string, repo: string, ref: string, before: string, after: string, commits: Array<{ id: string; message: string }>) {
  return {
    ref,
    before,
    after,
    created: false,
    deleted: false,
    forced: false,
    commits: commits.map((c) => ({ ...c, distinct: true, timestamp: new Date().toISOString(), author: { name: 'Octo', email: 'octo@example.test' } })),
    head_commit: commits.at(-1) ?? null,
    repository: repositoryOf(owner, repo),
    pusher: { name: 'octo-member', email: 'octo@example.test' },
    sender: userOf('octo-member'),
  };
}

export interface Delivery {
  id: string;
  event: string;
  body: string;
  headers: Record<string, string>;
}

/** A delivery signed as GitHub signs it (X-Hub-Signature-256 over the exact body). */
export async function signedDelivery(secret: string, event: string, payload: unknown, id: string = randomUUID()): Promise<Delivery> {
  const body = JSON.stringify(payload);
  const signature = await new Webhooks({ secret }).sign(body);
  return {
    id,
    event,
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/5a3c1b0',
      'x-github-event': event,
      'x-github-delivery': id,
      'x-github-hook-id': '123456',
      'x-hub-signature-256': signature,
    },
  };
}

/** Posts a delivery to the gateway's webhook route. */
export const deliver = (gatewayUrl: string, d: Delivery) => fetch(`${gatewayUrl}/github/webhook`, { method: 'POST', headers: d.headers, body: d.body });

/** A deliveries log as an admin reads it: `GET /v2/agent/{projectId}/github/deliveries` or a connection's. */
export type DeliveriesLog = () => Promise<Array<{ id: string; outcome: string }>>;

/**
 * Posts a delivery and, when the answer says it was queued (202), waits until the log shows what docent did with it.
 * `body`: that record (or the answer, for a delivery settled at once); `answer`: what GitHub's delivery log shows.
 */
export async function deliverSettled(gatewayUrl: string, d: Delivery, log: DeliveriesLog, path = '/github/webhook') {
  const r = await fetch(`${gatewayUrl}${path}`, { method: 'POST', headers: d.headers, body: d.body });
  const answer = (await r.json()) as { id: string; outcome: string; reason?: string };
  if (r.status !== 202) return { status: r.status, answer, body: answer as any };
  const settled = await poll(
    `delivery ${d.id} settled`,
    async () => (await log()).find((x) => x.id === d.id),
    (x) => x !== undefined && x.outcome !== 'queued',
    90_000,
  );
  return { status: r.status, answer, body: settled as any };
}
