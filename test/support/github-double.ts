import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GitServer } from './git-server';

export interface PullRequest {
  number: number;
  title: string;
  body: string | null;
  draft: boolean;
  head: string;
  base: string;
  headSha: string;
  html_url: string;
}

export interface IssueComment {
  id: number;
  /** The pull request (an issue, to GitHub's comments API) the comment is on. */
  issue: number;
  body: string;
}

export interface GitHubDouble {
  /** Configure as DOCENT_GITHUB_API_URL. */
  apiUrl: string;
  pulls: PullRequest[];
  comments: IssueComment[];
  /** Requests GitHub would have refused, with the reason; tests expect none unless they provoke one. */
  rejected: string[];
  /** The next create-pull-request call is refused as GitHub refuses a token without the permission (403). */
  refuseNextCreate(): void;
  close(): Promise<void>;
}

export interface GitHubDoubleOptions {
  token: string;
  /** The head commit of a branch in the real git remote, or null when the branch does not exist. */
  branchHead(owner: string, repo: string, branch: string): Promise<string | null>;
  /** Whether the repository exists. */
  repoExists(owner: string, repo: string): Promise<boolean>;
  /** More endpoints, tried after the credential check (github-double-conversation.ts); true when one answered. */
  extraRoutes?: (req: http.IncomingMessage, res: http.ServerResponse, url: URL, body: Buffer) => Promise<boolean>;
}

/** Repositories and branches as the test git server holds them, which is what GitHub reads from its own storage. */
export function backedBy(git: GitServer): Omit<GitHubDoubleOptions, 'token'> {
  return {
    repoExists: (owner, repo) =>
      git.git(owner, repo, 'rev-parse', '--git-dir').then(
        () => true,
        () => false,
      ),
    branchHead: (owner, repo, branch) =>
      git.git(owner, repo, 'rev-parse', '--verify', `refs/heads/${branch}`).then(
        (s) => s.trim(),
        () => null,
      ),
  };
}

/**
 * A local stand-in for the GitHub REST API's pulls endpoints, checked against GitHub's documented request shapes
 * (docs.github.com/rest/pulls/pulls) and answering in its response shapes, with branches read from the real git remote.
 */
export async function startGitHubDouble(opts: GitHubDoubleOptions): Promise<GitHubDouble> {
  const pulls: PullRequest[] = [];
  const comments: IssueComment[] = [];
  const rejected: string[] = [];
  let nextNumber = 1;
  let refuseCreate = false;

  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-github-media-type': 'github.v3; format=json' });
    res.end(JSON.stringify(body));
  };
  const refuse = (res: http.ServerResponse, status: number, message: string, errors?: unknown[]) => {
    rejected.push(`${status} ${message}${errors ? ' ' + JSON.stringify(errors) : ''}`);
    json(res, status, { message, ...(errors ? { errors } : {}), documentation_url: 'https://docs.github.com/rest/pulls/pulls', status: String(status) });
  };
  const toApi = (p: PullRequest, owner: string, repo: string) => ({
    id: 1000 + p.number,
    number: p.number,
    state: 'open',
    title: p.title,
    body: p.body,
    draft: p.draft,
    html_url: p.html_url,
    url: `${apiUrl}/repos/${owner}/${repo}/pulls/${p.number}`,
    head: { label: `${owner}:${p.head}`, ref: p.head, sha: p.headSha },
    base: { label: `${owner}:${p.base}`, ref: p.base },
    user: { login: 'docent-bot' },
    merged: false,
  });

  // docs.github.com/rest/issues/comments: GET and POST /repos/{owner}/{repo}/issues/{issue_number}/comments; a pull
  // request is an issue to this API. POST needs `body`, a string.
  async function issueComments(req: http.IncomingMessage, res: http.ServerResponse, url: URL, owner: string, repo: string, issue: number, raw: Buffer) {
    if (!(await opts.repoExists(owner, repo)) || !pulls.some((p) => p.number === issue)) return refuse(res, 404, 'Not Found');
    const toApi = (c: IssueComment) => ({
      id: c.id,
      body: c.body,
      html_url: `https://github.test/${owner}/${repo}/pull/${issue}#issuecomment-${c.id}`,
      issue_url: `${apiUrl}/repos/${owner}/${repo}/issues/${issue}`,
      user: { login: 'docent-bot' },
      created_at: new Date().toISOString(),
    });
    if (req.method === 'GET') {
      const perPage = Number(url.searchParams.get('per_page') ?? 30);
      if (!Number.isInteger(perPage) || perPage < 1 || perPage > 100) return refuse(res, 422, 'Validation Failed', [{ resource: 'IssueComment', field: 'per_page', code: 'invalid' }]);
      return json(res, 200, comments.filter((x) => x.issue === issue).map(toApi));
    }
    if (req.method !== 'POST') return refuse(res, 404, 'Not Found');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    } catch {
      return refuse(res, 400, 'Problems parsing JSON');
    }
    if (typeof body.body !== 'string' || body.body === '') return refuse(res, 422, 'Validation Failed', [{ resource: 'IssueComment', field: 'body', code: 'missing_field' }]);
    if (body.body.length > 65_536)
      return refuse(res, 422, 'Validation Failed', [{ resource: 'IssueComment', field: 'body', code: 'custom', message: 'Body is too long (maximum is 65536 characters)' }]);
    const comment: IssueComment = { id: 5000 + comments.length, issue, body: body.body };
    comments.push(comment);
    return json(res, 201, toApi(comment));
  }

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const auth = req.headers.authorization ?? '';
    if (auth !== `token ${opts.token}` && auth !== `Bearer ${opts.token}`) return refuse(res, 401, 'Bad credentials');
    if (!/application\/(vnd\.github|json)/.test(String(req.headers.accept ?? ''))) return refuse(res, 415, 'Unsupported Accept header');
    const url = new URL(req.url ?? '/', 'http://x');
    if (await opts.extraRoutes?.(req, res, url, Buffer.concat(chunks))) return;
    const c = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/.exec(url.pathname);
    if (c) return issueComments(req, res, url, c[1]!, c[2]!, Number(c[3]), Buffer.concat(chunks));
    const m = /^\/repos\/([^/]+)\/([^/]+)\/pulls$/.exec(url.pathname);
    if (!m) return refuse(res, 404, 'Not Found');
    const [, owner, repo] = m as unknown as [string, string, string];
    if (!(await opts.repoExists(owner, repo))) return refuse(res, 404, 'Not Found');

    if (req.method === 'GET') {
      // GET /repos/{owner}/{repo}/pulls: head is "user:ref-name", state is open|closed|all.
      const head = url.searchParams.get('head');
      const state = url.searchParams.get('state') ?? 'open';
      if (!['open', 'closed', 'all'].includes(state)) return refuse(res, 422, 'Validation Failed', [{ resource: 'PullRequest', field: 'state', code: 'invalid' }]);
      const found = pulls.filter((p) => state !== 'closed' && (!head || `${owner}:${p.head}` === head));
      return json(
        res,
        200,
        found.map((p) => toApi(p, owner, repo)),
      );
    }
    if (req.method !== 'POST') return refuse(res, 404, 'Not Found');

    // POST /repos/{owner}/{repo}/pulls: title, head and base are required strings; body string; draft boolean.
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return refuse(res, 400, 'Problems parsing JSON');
    }
    for (const field of ['title', 'head', 'base']) {
      if (typeof body[field] !== 'string' || body[field] === '') return refuse(res, 422, 'Validation Failed', [{ resource: 'PullRequest', field, code: 'missing_field' }]);
    }
    if (body.body !== undefined && typeof body.body !== 'string') return refuse(res, 422, 'Invalid request: body is not a string');
    if (body.draft !== undefined && typeof body.draft !== 'boolean') return refuse(res, 422, 'Invalid request: draft is not a boolean');
    if (refuseCreate) {
      refuseCreate = false;
      return refuse(res, 403, 'Resource not accessible by integration');
    }
    const head = String(body.head).replace(new RegExp(`^${owner}:`), '');
    const headSha = await opts.branchHead(owner, repo, head);
    if (!headSha) return refuse(res, 422, 'Validation Failed', [{ resource: 'PullRequest', field: 'head', code: 'invalid' }]);
    if (!(await opts.branchHead(owner, repo, String(body.base)))) return refuse(res, 422, 'Validation Failed', [{ resource: 'PullRequest', field: 'base', code: 'invalid' }]);
    if (pulls.some((p) => p.head === head)) {
      return refuse(res, 422, 'Validation Failed', [{ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${owner}:${head}.` }]);
    }
    const number = nextNumber++;
    const pr: PullRequest = {
      number,
      title: String(body.title),
      body: (body.body as string | undefined) ?? null,
      draft: body.draft === true,
      head,
      base: String(body.base),
      headSha,
      html_url: `https://github.test/${owner}/${repo}/pull/${number}`,
    };
    pulls.push(pr);
    json(res, 201, toApi(pr, owner, repo));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    apiUrl,
    pulls,
    comments,
    rejected,
    refuseNextCreate: () => {
      refuseCreate = true;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
