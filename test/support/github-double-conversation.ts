import type { GitHubRoute, GitHubRouteContext, PullRequest } from './github-double';

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

/** A person's role on the repository (docs.github.com/organizations/managing-user-access-to-your-organizations-repositories/managing-repository-roles/repository-roles-for-an-organization). */
export type RepositoryRole = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

export interface Reaction {
  kind: 'issue' | 'review';
  commentId: number;
  content: string;
}

/** Pull-request conversations on the GitHub double: people's comments, reactions, and pull requests closing or merging. */
export interface GitHubConversation {
  /** Plug into startGitHubDouble's `routes`: served after its credential, scope and permission checks. */
  routes: GitHubRoute[];
  /** A person comments (GitHub stores it, then sends the webhook); returns the stored comment. */
  comment(c: Omit<HumanComment, 'id'>): HumanComment;
  reactions: Reaction[];
  /** Someone merges (or closes) the pull request on GitHub. */
  close(pull: number, merged: boolean): void;
  /** Gives `login` a role on every repository of the double; anyone not given one has none (a private repository). */
  setRole(login: string, role: RepositoryRole): void;
  /** Logins whose permission was asked (GET .../collaborators/{username}/permission), in order. */
  permissionQueries: string[];
  /** The diff GitHub serves for the pull request (`Accept: application/vnd.github.diff`); without one, 406 as for a diff too large. */
  setDiff(pull: number, diff: string): void;
}

// docs.github.com/rest/reactions/reactions: the contents a reaction may have.
const reactionContents = new Set(['+1', '-1', 'laugh', 'confused', 'heart', 'hooray', 'rocket', 'eyes']);

/** A POST reaction's content, or null once refused as GitHub refuses it (400 for a body that is not JSON, 422 for no reaction). */
export function reactionContent(raw: Buffer, refuse: GitHubRouteContext['refuse']): string | null {
  let body: { content?: unknown };
  try {
    body = JSON.parse(raw.toString('utf8')) as { content?: unknown };
  } catch {
    refuse(400, 'Problems parsing JSON');
    return null;
  }
  if (typeof body.content === 'string' && reactionContents.has(body.content)) return body.content;
  refuse(422, 'Validation Failed: content is not a reaction');
  return null;
}

/**
 * GET /repos/{o}/{r}/pulls/{n} (with state, merged, head repository), people's permission on the repository, and POST reactions on issue comments and review
 * comments, answered as GitHub answers them: 404 for an unknown pull request or comment, 422 for an unknown reaction,
 * 200 for a reaction that already exists and 201 for a new one. Refusals land in the double's `rejected`.
 */
export function githubConversation(pullsOf: () => PullRequest[]): GitHubConversation {
  const roles = new Map<string, RepositoryRole>();
  const permissionQueries: string[] = [];
  const comments: HumanComment[] = [];
  const reactions: Reaction[] = [];
  const closed = new Map<number, { merged: boolean; at: string }>();
  const diffs = new Map<number, string>();

  function pullRequest({ match, json, refuse, req, res }: GitHubRouteContext) {
    const [, owner, repo, n] = match as unknown as [string, string, string, string];
    const number = Number(n);
    const p = pullsOf().find((x) => x.number === number);
    if (!p) return refuse(404, 'Not Found');
    // docs.github.com/rest/pulls/pulls#get-a-pull-request: the diff media type answers the diff as text.
    if (/application\/vnd\.github(\.v3)?\.diff/.test(req.headers.accept ?? '')) {
      const diff = diffs.get(number);
      if (diff === undefined) return refuse(406, 'Sorry, the diff exceeded the maximum number of lines (20000)');
      res.writeHead(200, { 'content-type': 'application/vnd.github.diff; charset=utf-8' });
      return void res.end(diff);
    }
    const end = closed.get(number);
    const repository = { full_name: `${owner}/${repo}`, name: repo, owner: { login: owner } };
    return json(200, {
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

  /**
   * GET /repos/{o}/{r}/collaborators/{username}/permission as GitHub answers it: `permission` is the legacy base level
   * (maintain reads as write, triage as read), `role_name` the role itself; someone with no access to a private
   * repository gets 200 with `none`.
   */
  function collaboratorPermission({ match, json }: GitHubRouteContext) {
    const login = decodeURIComponent(match[3]!);
    permissionQueries.push(login);
    const role = roles.get(login.toLowerCase()) ?? 'none';
    const permission = role === 'maintain' ? 'write' : role === 'triage' ? 'read' : role;
    const rank = ['none', 'read', 'triage', 'write', 'maintain', 'admin'].indexOf(role);
    const permissions = { admin: rank >= 5, maintain: rank >= 4, push: rank >= 3, triage: rank >= 2, pull: rank >= 1 };
    return json(200, { permission, role_name: role, user: { login, id: login.length * 1000 + 7, type: 'User', site_admin: false, permissions, role_name: role } });
  }

  const react =
    (kind: Reaction['kind']) =>
    ({ match, body: raw, json, refuse }: GitHubRouteContext) => {
      const commentId = Number(match[3]);
      if (!comments.some((c) => c.id === commentId && c.kind === kind)) return refuse(404, 'Not Found');
      const content = reactionContent(raw, refuse);
      if (content === null) return;
      const existing = reactions.find((r) => r.kind === kind && r.commentId === commentId && r.content === content);
      if (!existing) reactions.push({ kind, commentId, content });
      return json(existing ? 200 : 201, { id: 7000 + reactions.length, content, user: { login: 'docent-bot' }, created_at: new Date().toISOString() });
    };

  return {
    reactions,
    // The permission each endpoint needs of an installation token (docs.github.com/rest/overview/permissions-required-for-github-apps).
    routes: [
      { method: 'GET', path: /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)$/, permission: ['pull_requests', 'read'], handle: pullRequest },
      { method: 'GET', path: /^\/repos\/([^/]+)\/([^/]+)\/collaborators\/([^/]+)\/permission$/, permission: ['metadata', 'read'], handle: collaboratorPermission },
      { method: 'POST', path: /^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)\/reactions$/, permission: ['issues', 'write'], handle: react('issue') },
      { method: 'POST', path: /^\/repos\/([^/]+)\/([^/]+)\/pulls\/comments\/(\d+)\/reactions$/, permission: ['pull_requests', 'write'], handle: react('review') },
    ],
    comment(c) {
      if (!pullsOf().some((p) => p.number === c.pull)) throw new Error(`no pull request #${c.pull} to comment on`);
      const stored = { ...c, id: 9000 + comments.length };
      comments.push(stored);
      return stored;
    },
    close(pull, merged) {
      closed.set(pull, { merged, at: new Date().toISOString() });
    },
    setRole(login, role) {
      roles.set(login.toLowerCase(), role);
    },
    setDiff(pull, diff) {
      diffs.set(pull, diff);
    },
    permissionQueries,
  };
}
