import type { GitHubRoute, GitHubRouteContext } from './github-double';
import { reactionContent } from './github-double-conversation';

// Issues on the GitHub double (docs.github.com/rest/issues): issues people open, and reactions on them. Comments on
// an issue are the double's own issue comments route (startGitHubDouble's `issueExists`).

export interface Issue {
  owner: string;
  repo: string;
  number: number;
  title: string;
  body: string;
  html_url: string;
}

export interface GitHubIssues {
  routes: GitHubRoute[];
  /** For startGitHubDouble: whether the repository has this issue. */
  issueExists(owner: string, repo: string, number: number): boolean;
  /** Someone opens an issue; numbers start at 700, apart from the double's pull requests. */
  open(owner: string, repo: string, title: string, body: string): Issue;
  /** Reactions on issues themselves (POST /repos/{o}/{r}/issues/{n}/reactions). */
  reactions: Array<{ owner: string; repo: string; issue: number; content: string }>;
}

export function githubIssues(): GitHubIssues {
  const issues: Issue[] = [];
  const reactions: GitHubIssues['reactions'] = [];
  const find = (owner: string, repo: string, number: number) => issues.find((i) => i.owner.toLowerCase() === owner.toLowerCase() && i.repo.toLowerCase() === repo.toLowerCase() && i.number === number);

  function react({ match, body: raw, json, refuse }: GitHubRouteContext) {
    const [, owner, repo, n] = match as unknown as [string, string, string, string];
    if (!find(owner, repo, Number(n))) return refuse(404, 'Not Found');
    const content = reactionContent(raw, refuse);
    if (content === null) return;
    const existing = reactions.some((r) => r.owner === owner && r.repo === repo && r.issue === Number(n) && r.content === content);
    if (!existing) reactions.push({ owner, repo, issue: Number(n), content });
    return json(existing ? 200 : 201, { id: 8000 + reactions.length, content, user: { login: 'docent-bot' }, created_at: new Date().toISOString() });
  }

  return {
    routes: [{ method: 'POST', path: /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/reactions$/, permission: ['issues', 'write'], handle: react }],
    issueExists: (owner, repo, number) => find(owner, repo, number) !== undefined,
    open(owner, repo, title, body) {
      const number = 700 + issues.length;
      const issue = { owner, repo, number, title, body, html_url: `https://github.test/${owner}/${repo}/issues/${number}` };
      issues.push(issue);
      return issue;
    },
    reactions,
  };
}
