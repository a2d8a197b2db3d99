import type http from 'node:http';
import type { PullRequest } from './github-double';

/** A comment a person wrote on a pull request: on the conversation (issue) or on a line of the diff (review). */
export interface HumanComment {
  id: number;
  kind: 'issue' | 'review';
  pull: number;
  body: string;
  login: string;
  association: 'OWNER' | 'MEMBER' | 'COLLABORATOR' | 'CONTRIBUTOR' | 'FIRST_TIME_CONTRIBUTOR' | 'NONE';
  /** Review comments only: the file, line and hunk they were made on. */
  path?: string;
  line?: number;
  diffHunk?: string;
}

export interface Reaction {
  kind: 'issue' | 'review';
  commentId: number;
  content: string;
}

/** Pull-request conversations on the GitHub double: people's comments, reactions, and pull requests closing or merging. */
export interface GitHubConversation {
  /** Plug into startGitHubDouble's `extraRoutes`. */
  routes: (req: http.IncomingMessage, res: http.ServerResponse, url: URL, body: Buffer) => Promise<boolean>;
  /** A person comments (GitHub stores it, then sends the webhook); returns the stored comment. */
  comment(c: Omit<HumanComment, 'id'>): HumanComment;
  reactions: Reaction[];
  /** Requests GitHub would have refused, with the reason. */
  rejected: string[];
  /** Someone merges (or closes) the pull request on GitHub. */
  close(pull: number, merged: boolean): void;
}

// docs.github.com/rest/reactions/reactions: the contents a reaction may have.
const reactionContents = new Set(['+1', '-1', 'laugh', 'confused', 'heart', 'hooray', 'rocket', 'eyes']);

/**
 * GET /repos/{o}/{r}/pulls/{n} (with state, merged, head repository), and POST reactions on issue comments and review
 * comments, answered as GitHub answers them: 404 for an unknown pull request or comment, 422 for an unknown reaction,
 * 200 for a reaction that already exists and 201 for a new one.
 */
export function githubConversation(pullsOf: () => PullRequest[]): GitHubConversation {
  const comments: HumanComment[] = [];
  const reactions: Reaction[] = [];
  const rejected: string[] = [];
  const closed = new Map<number, { merged: boolean; at: string }>();

  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
    return true;
  };
  const refuse = (res: http.ServerResponse, status: number, message: string) => {
    rejected.push(`${status} ${message}`);
    return json(res, status, { message, documentation_url: 'https://docs.github.com/rest', status: String(status) });
  };

  function pullRequest(res: http.ServerResponse, owner: string, repo: string, number: number) {
    const p = pullsOf().find((x) => x.number === number);
    if (!p) return refuse(res, 404, 'Not Found');
    const end = closed.get(number);
    const repository = { full_name: `${owner}/${repo}`, name: repo, owner: { login: owner } };
    return json(res, 200, {
      number,
      state: end ? 'closed' : 'open',
      merged: end?.merged ?? false,
      merged_at: end?.merged ? end.at : null,
      closed_at: end?.at ?? null,
      title: p.title,
      draft: p.draft,
      html_url: p.html_url,
      head: { label: `${owner}:${p.head}`, ref: p.head, sha: p.headSha, repo: repository },
      base: { label: `${owner}:${p.base}`, ref: p.base, repo: repository },
      user: { login: 'docent-bot' },
    });
  }

  function react(res: http.ServerResponse, kind: Reaction['kind'], commentId: number, raw: Buffer) {
    if (!comments.some((c) => c.id === commentId && c.kind === kind)) return refuse(res, 404, 'Not Found');
    let body: { content?: unknown };
    try {
      body = JSON.parse(raw.toString('utf8')) as { content?: unknown };
    } catch {
      return refuse(res, 400, 'Problems parsing JSON');
    }
    if (typeof body.content !== 'string' || !reactionContents.has(body.content)) return refuse(res, 422, 'Validation Failed: content is not a reaction');
    const existing = reactions.find((r) => r.kind === kind && r.commentId === commentId && r.content === body.content);
    if (!existing) reactions.push({ kind, commentId, content: body.content });
    return json(res, existing ? 200 : 201, { id: 7000 + reactions.length, content: body.content, user: { login: 'docent-bot' }, created_at: new Date().toISOString() });
  }

  return {
    reactions,
    rejected,
    async routes(req, res, url, raw) {
      const pr = /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)$/.exec(url.pathname);
      if (pr && req.method === 'GET') return pullRequest(res, pr[1]!, pr[2]!, Number(pr[3]));
      const r = /^\/repos\/[^/]+\/[^/]+\/(issues|pulls)\/comments\/(\d+)\/reactions$/.exec(url.pathname);
      if (r && req.method === 'POST') return react(res, r[1] === 'issues' ? 'issue' : 'review', Number(r[2]), raw);
      return false;
    },
    comment(c) {
      if (!pullsOf().some((p) => p.number === c.pull)) throw new Error(`no pull request #${c.pull} to comment on`);
      const stored = { ...c, id: 9000 + comments.length };
      comments.push(stored);
      return stored;
    },
    close(pull, merged) {
      closed.set(pull, { merged, at: new Date().toISOString() });
    },
  };
}
