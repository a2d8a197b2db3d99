import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GitServer } from './git-server';
import { appGrants, issueToken, jwtProblem, repositoryPermissions, tokenRequestProblem, type IssuedToken, type TestApp, type TokenRequest } from './github-app-double';

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

export interface CheckRun {
  id: number;
  name: string;
  headSha: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: string | null;
  output: { title?: string; summary?: string; text?: string } | null;
  /** Every status the run was given, in order (created, then each update). */
  statusHistory: string[];
}

export interface CommitStatus {
  sha: string;
  state: string;
  context: string;
  description: string | null;
}

/** A request the double answered, and with which credential: the repositories an installation token covered. */
export interface ApiCall {
  method: string;
  path: string;
  credential: 'jwt' | 'installation' | 'token';
  /** For an installation token: the `owner/name`s it was issued for. */
  scope?: string[];
  /**
   * Which credential it was, never the token itself: `pat:*` for the `token` option, `pat:<owners joined by ,>` for one
   * of `tokens` (owners as given), `installation:<installation id>` for an installation token; absent for a JWT.
   * Not enumerable, so that `toEqual` on calls keeps comparing method, path, credential and scope only: read it as
   * `call.credentialId` or match it with `toMatchObject`.
   */
  credentialId?: string;
}

export interface RateLimitAnswer {
  status: 403 | 429;
  /** Sent as `retry-after` (secondary limit). */
  retryAfterSeconds?: number;
  /** Sent as `x-ratelimit-reset`, with `x-ratelimit-remaining: 0` (primary limit). */
  resetInSeconds?: number;
}

/** A call `holdNext` holds: when it arrived, and when its answer left (epoch ms). */
export interface HeldCall {
  method: string;
  path: RegExp;
  arrivedAt?: number;
  answeredAt?: number;
}

export interface RateLimitRecord {
  method: string;
  path: string;
  /** When GitHub said the call may be made again (epoch ms). */
  retryAt: number;
  /** When the same call came back and was served, if it did. */
  retriedAt?: number;
}

/** A route a test module adds (comments, reactions, ...): matched after authentication, the rate limit and scope checks, then its permission is checked. */
export interface GitHubRoute {
  method: string;
  /** Matched against the path; groups 1 and 2 are the owner and repository when the route is a repository's. */
  path: RegExp;
  /** What an installation token needs for it, e.g. ['issues', 'write']. */
  permission?: [string, 'read' | 'write'];
  handle(ctx: GitHubRouteContext): void | Promise<void>;
}

export interface GitHubRouteContext {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  url: URL;
  match: RegExpExecArray;
  body: Buffer;
  json(status: number, body: unknown, headers?: Record<string, string>): void;
  refuse(status: number, message: string, errors?: unknown[]): void;
}

export interface GitHubDouble {
  /** Configure as DOCENT_GITHUB_API_URL. */
  apiUrl: string;
  pulls: PullRequest[];
  comments: IssueComment[];
  /** Requests GitHub would have refused, with the reason; tests expect none unless they provoke one. */
  rejected: string[];
  /** Every API call served, with its credential (App mode: the token's repositories). */
  calls: ApiCall[];
  /** Installation-token requests (App mode), as asked: repositories and permissions. */
  tokenRequests: TokenRequest[];
  /** Every installation token issued (App mode), for checks that none leaks. */
  issuedTokens(): string[];
  checkRuns: CheckRun[];
  statuses: CommitStatus[];
  rateLimits: RateLimitRecord[];
  /** The next create-pull-request call is refused as GitHub refuses a token without the permission (403). */
  refuseNextCreate(): void;
  /** Draft pull requests are refused with 422, as in a repository whose plan has none. */
  refuseDrafts(on?: boolean): void;
  /** The next request matching `method` and `path` gets a rate-limit answer; the same call before the named time is refused again. */
  rateLimitNext(method: string, path: RegExp, answer: RateLimitAnswer): void;
  /** The next request matching `method` and `path` is answered `ms` later (a slow GitHub), as it would have been then. */
  holdNext(method: string, path: RegExp, ms: number): HeldCall;
  /** Lists answer at most this many items a page (GitHub: per_page up to 100, default 30). */
  setMaxPerPage(n: number): void;
  /** App mode: installs the App on `owner/name` (the installation id is per owner; a new one after an uninstall). */
  install(owner: string, name: string): void;
  /** App mode: removes `owner/name` from its installation; the last repository's removal uninstalls the App from the owner and revokes its tokens. */
  uninstall(owner: string, name: string): void;
  /** App mode: every token issued so far expires now, as an hour later (GitHub answers 401 to it). */
  expireTokens(): void;
  /** App mode: what the App is granted on installations from now on (GitHub: the App's settings, accepted by the owner). */
  setGrants(grants: Record<string, 'read' | 'write'>): void;
  /** App mode: the installation id on `owner` (case-insensitive), while the App is installed there. */
  installationOf(owner: string): number | undefined;
  /**
   * Whether git may use `token` for the repository, for GitServer.acceptTokens: an installation token covering it with
   * contents read (write for a push); the `token` option for any repository, one of `tokens` for its owners'
   * repositories (a push needs `tokenPermissions` write, the default).
   */
  gitAllows(token: string, owner: string, name: string, push: boolean): boolean;
  close(): Promise<void>;
}

export interface GitHubDoubleOptions {
  /** Token mode: a personal token reaching every repository (GET /user: `docent-bot`). */
  token?: string;
  /**
   * Personal tokens reaching only their owners' repositories, as a fine-grained PAT or a user's token: token -> the
   * owners (case-insensitive). Another owner's repository is 404 to it on every /repos/{owner}/{repo} route, as GitHub
   * answers for a private repository a token cannot see. GET /user: the first owner. May be given with `token`
   * (which wins if the same string is in both) and with `app`.
   */
  tokens?: Record<string, string[]>;
  /**
   * What a personal token (`token` or one of `tokens`) may do on the repositories it reaches, by token; default 'write'.
   * 'read': no push (git and GET /repos/{owner}/{repo} permissions), and 403 on the API's writes.
   */
  tokenPermissions?: Record<string, 'read' | 'write'>;
  /** App mode: the App's JWTs and installation tokens it issued are accepted (and personal tokens only if given too). */
  app?: TestApp;
  /** App mode: how long the tokens it issues last (GitHub: an hour). */
  tokenLifetimeMs?: number;
  /** The head commit of a branch in the real git remote, or null when the branch does not exist. */
  branchHead(owner: string, repo: string, branch: string): Promise<string | null>;
  /** Whether the repository exists. */
  repoExists(owner: string, repo: string): Promise<boolean>;
  /** Whether the commit exists in the repository. */
  commitExists?(owner: string, repo: string, sha: string): Promise<boolean>;
  /** Whether `owner/name` has an issue (not a pull request) of this number (github-double-issues.ts). */
  issueExists?(owner: string, repo: string, number: number): boolean;
  /** Routes of other test modules (github-double-conversation.ts). */
  routes?: GitHubRoute[];
}

/** Repositories and branches as the test git server holds them, which is what GitHub reads from its own storage. */
export function backedBy(git: GitServer): Pick<GitHubDoubleOptions, 'repoExists' | 'branchHead' | 'commitExists'> {
  return {
    commitExists: (owner, repo, sha) =>
      git.git(owner, repo, 'cat-file', '-e', `${sha}^{commit}`).then(
        () => true,
        () => false,
      ),
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
 * A local stand-in for the GitHub REST API (pulls, issue comments, check runs, commit statuses, and a GitHub App's
 * installations and tokens), checked against GitHub's documented request shapes (docs.github.com/rest) and answering
 * in its response shapes and with its refusals: 422s, rate limits, pagination. Branches are read from the real git remote.
 */
export async function startGitHubDouble(opts: GitHubDoubleOptions): Promise<GitHubDouble> {
  const pulls: PullRequest[] = [];
  const comments: IssueComment[] = [];
  const rejected: string[] = [];
  const calls: ApiCall[] = [];
  const tokenRequests: TokenRequest[] = [];
  const issued: IssuedToken[] = [];
  const checkRuns: CheckRun[] = [];
  const statuses: CommitStatus[] = [];
  const rateLimits: RateLimitRecord[] = [];
  const armedLimits: Array<{ method: string; path: RegExp; answer: RateLimitAnswer }> = [];
  const armedHolds: Array<{ call: HeldCall; ms: number }> = [];
  // Installation ids by owner: one installation per account, as on GitHub; the account's login as first installed, and
  // its repositories `owner/name`.
  const installations = new Map<string, { id: number; login: string; repositories: string[] }>();
  let installationsMade = 0;
  let grants: Record<string, 'read' | 'write'> = { ...appGrants };
  let nextNumber = 1;
  let refuseCreate = false;
  let draftsRefused = false;
  let maxPerPage = 100;
  // Stable ids for repositories and users, by lower-case name, as GitHub's are.
  const ids = new Map<string, number>();
  const idOf = (kind: 'repo' | 'user', name: string) => {
    const key = `${kind}:${name.toLowerCase()}`;
    if (!ids.has(key)) ids.set(key, (kind === 'repo' ? 600_000 : 700_000) + ids.size);
    return ids.get(key)!;
  };

  /** A personal token the double accepts (`token`, `tokens`): the owners it reaches ('*': every one), its user, its access. */
  interface PersonalToken {
    owners: string[] | '*';
    login: string;
    write: boolean;
    credentialId: string;
  }
  const personal = (auth: string | undefined): PersonalToken | undefined => {
    if (!auth) return undefined;
    const write = (opts.tokenPermissions && Object.hasOwn(opts.tokenPermissions, auth) ? opts.tokenPermissions[auth] : 'write') === 'write';
    if (opts.token && auth === opts.token) return { owners: '*', login: 'docent-bot', write, credentialId: 'pat:*' };
    const owners = opts.tokens && Object.hasOwn(opts.tokens, auth) ? opts.tokens[auth] : undefined;
    if (!owners) return undefined;
    return { owners: owners.map((o) => o.toLowerCase()), login: owners[0] ?? 'docent-bot', write, credentialId: `pat:${owners.join(',')}` };
  };
  const reaches = (p: PersonalToken, owner: string) => p.owners === '*' || p.owners.includes(owner.toLowerCase());
  /** `calls` gets the entry, with `credentialId` not enumerable (ApiCall says why). */
  const record = (call: ApiCall, credentialId?: string) => {
    if (credentialId !== undefined) Object.defineProperty(call, 'credentialId', { value: credentialId, enumerable: false });
    calls.push(call);
  };

  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-github-media-type': 'github.v3; format=json', ...headers });
    res.end(JSON.stringify(body));
  };
  const refuse = (res: http.ServerResponse, status: number, message: string, errors?: unknown[], headers: Record<string, string> = {}) => {
    rejected.push(`${status} ${message}${errors ? ' ' + JSON.stringify(errors) : ''}`);
    json(res, status, { message, ...(errors ? { errors } : {}), documentation_url: 'https://docs.github.com/rest', status: String(status) }, headers);
  };
  const parse = (raw: Buffer): Record<string, unknown> | null => {
    try {
      const v = JSON.parse(raw.toString('utf8') || '{}') as unknown;
      return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
    } catch {
      return null;
    }
  };

  /** GitHub's pagination: per_page (1-100, default 30) and page, with a Link header naming the next and last pages. */
  function page<T>(res: http.ServerResponse, url: URL, items: T[], wrap: (slice: T[]) => unknown = (x) => x): void {
    const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 30), maxPerPage);
    const pageNo = Number(url.searchParams.get('page') ?? 1);
    if (!Number.isInteger(perPage) || perPage < 1 || !Number.isInteger(pageNo) || pageNo < 1) {
      refuse(res, 422, 'Validation Failed', [{ field: 'per_page', code: 'invalid' }]);
      return;
    }
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const link = (n: number) => {
      const u = new URL(`${apiUrl}${url.pathname}${url.search}`);
      u.searchParams.set('per_page', String(perPage));
      u.searchParams.set('page', String(n));
      return `<${u}>`;
    };
    const links = pageNo < last ? [`${link(pageNo + 1)}; rel="next"`, `${link(last)}; rel="last"`] : [];
    json(res, 200, wrap(items.slice((pageNo - 1) * perPage, pageNo * perPage)), links.length ? { link: links.join(', ') } : {});
  }

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
  const runToApi = (r: CheckRun, owner: string, repo: string) => ({
    id: r.id,
    name: r.name,
    head_sha: r.headSha,
    status: r.status,
    conclusion: r.conclusion,
    output: { title: r.output?.title ?? null, summary: r.output?.summary ?? null, text: r.output?.text ?? null, annotations_count: 0 },
    html_url: `https://github.test/${owner}/${repo}/runs/${r.id}`,
    app: opts.app ? { id: Number(opts.app.id), slug: opts.app.slug } : null,
  });

  // docs.github.com/rest/issues/comments: GET and POST /repos/{owner}/{repo}/issues/{issue_number}/comments; a pull
  // request is an issue to this API. POST needs `body`, a string.
  async function issueComments(req: http.IncomingMessage, res: http.ServerResponse, url: URL, owner: string, repo: string, issue: number, raw: Buffer) {
    if (!pulls.some((p) => p.number === issue) && !opts.issueExists?.(owner, repo, issue)) return refuse(res, 404, 'Not Found');
    const commentToApi = (c: IssueComment) => ({
      id: c.id,
      body: c.body,
      html_url: `https://github.test/${owner}/${repo}/${pulls.some((p) => p.number === issue) ? 'pull' : 'issues'}/${issue}#issuecomment-${c.id}`,
      issue_url: `${apiUrl}/repos/${owner}/${repo}/issues/${issue}`,
      user: { login: 'docent-bot' },
      created_at: new Date().toISOString(),
    });
    if (req.method === 'GET') return page(res, url, comments.filter((x) => x.issue === issue).map(commentToApi));
    const body = parse(raw);
    if (!body) return refuse(res, 400, 'Problems parsing JSON');
    if (typeof body.body !== 'string' || body.body === '') return refuse(res, 422, 'Validation Failed', [{ resource: 'IssueComment', field: 'body', code: 'missing_field' }]);
    if (body.body.length > 65_536)
      return refuse(res, 422, 'Validation Failed', [{ resource: 'IssueComment', field: 'body', code: 'custom', message: 'Body is too long (maximum is 65536 characters)' }]);
    const comment: IssueComment = { id: 5000 + comments.length, issue, body: body.body };
    comments.push(comment);
    return json(res, 201, commentToApi(comment));
  }

  // docs.github.com/rest/pulls/pulls: GET lists (head "user:ref", state open|closed|all); POST needs title, head, base.
  async function pullsRoute(req: http.IncomingMessage, res: http.ServerResponse, url: URL, owner: string, repo: string, raw: Buffer) {
    if (req.method === 'GET') {
      const head = url.searchParams.get('head');
      const state = url.searchParams.get('state') ?? 'open';
      if (!['open', 'closed', 'all'].includes(state)) return refuse(res, 422, 'Validation Failed', [{ resource: 'PullRequest', field: 'state', code: 'invalid' }]);
      const found = pulls.filter((p) => state !== 'closed' && (!head || `${owner}:${p.head}` === head));
      return page(
        res,
        url,
        found.map((p) => toApi(p, owner, repo)),
      );
    }
    const body = parse(raw);
    if (!body) return refuse(res, 400, 'Problems parsing JSON');
    for (const field of ['title', 'head', 'base']) {
      if (typeof body[field] !== 'string' || body[field] === '') return refuse(res, 422, 'Validation Failed', [{ resource: 'PullRequest', field, code: 'missing_field' }]);
    }
    if (body.body !== undefined && typeof body.body !== 'string') return refuse(res, 422, 'Invalid request: body is not a string');
    if (body.draft !== undefined && typeof body.draft !== 'boolean') return refuse(res, 422, 'Invalid request: draft is not a boolean');
    if (refuseCreate) {
      refuseCreate = false;
      return refuse(res, 403, 'Resource not accessible by integration');
    }
    if (draftsRefused && body.draft === true)
      return refuse(res, 422, 'Validation Failed', [{ resource: 'PullRequest', code: 'custom', message: 'Draft pull requests are not supported in this repository.' }]);
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
  }

  /** A check run's fields as POST and PATCH take them (docs.github.com/rest/checks/runs); the problem, or null. */
  function checkRunProblem(body: Record<string, unknown>, creating: boolean): string | null {
    if (creating && (typeof body.name !== 'string' || !body.name)) return 'name is missing';
    if (creating && (typeof body.head_sha !== 'string' || !/^[0-9a-f]{40}$/.test(body.head_sha))) return 'head_sha is missing';
    if (body.status !== undefined && !['queued', 'in_progress', 'completed'].includes(String(body.status))) return 'status is not included in the list';
    const conclusions = ['action_required', 'cancelled', 'failure', 'neutral', 'success', 'skipped', 'stale', 'timed_out'];
    if (body.conclusion !== undefined && !conclusions.includes(String(body.conclusion))) return 'conclusion is not included in the list';
    if (body.status === 'completed' && body.conclusion === undefined) return 'conclusion must be given when status is completed';
    const output = body.output as { title?: unknown; summary?: unknown; text?: unknown } | undefined;
    if (output !== undefined) {
      if (typeof output.title !== 'string' || typeof output.summary !== 'string') return 'output needs title and summary';
      if (output.summary.length > 65_535 || (typeof output.text === 'string' && output.text.length > 65_535)) return 'output is too long (maximum is 65535 characters)';
    }
    return null;
  }

  async function checkRunsRoute(res: http.ServerResponse, owner: string, repo: string, id: number | undefined, raw: Buffer) {
    const body = parse(raw);
    if (!body) return refuse(res, 400, 'Problems parsing JSON');
    const problem = checkRunProblem(body, id === undefined);
    if (problem) return refuse(res, 422, `Invalid request: ${problem}`);
    if (id === undefined) {
      if (!(await (opts.commitExists?.(owner, repo, String(body.head_sha)) ?? true))) return refuse(res, 422, 'No commit found for SHA: ' + String(body.head_sha));
      const status = (body.conclusion !== undefined ? 'completed' : (body.status ?? 'queued')) as CheckRun['status'];
      const run: CheckRun = {
        id: 7000 + checkRuns.length,
        name: String(body.name),
        headSha: String(body.head_sha),
        status,
        conclusion: (body.conclusion as string) ?? null,
        output: (body.output as CheckRun['output']) ?? null,
        statusHistory: [status],
      };
      checkRuns.push(run);
      return json(res, 201, runToApi(run, owner, repo));
    }
    const run = checkRuns.find((r) => r.id === id);
    if (!run) return refuse(res, 404, 'Not Found');
    if (body.conclusion !== undefined) run.status = 'completed';
    else if (body.status !== undefined) run.status = body.status as CheckRun['status'];
    if (body.conclusion !== undefined) run.conclusion = String(body.conclusion);
    if (body.output !== undefined) run.output = body.output as CheckRun['output'];
    run.statusHistory.push(run.status);
    return json(res, 200, runToApi(run, owner, repo));
  }

  // docs.github.com/rest/commits/statuses: state error|failure|pending|success; description up to 140 characters.
  async function statusRoute(res: http.ServerResponse, owner: string, repo: string, sha: string, raw: Buffer) {
    const body = parse(raw);
    if (!body) return refuse(res, 400, 'Problems parsing JSON');
    if (!['error', 'failure', 'pending', 'success'].includes(String(body.state))) return refuse(res, 422, 'Validation Failed', [{ resource: 'Status', field: 'state', code: 'custom' }]);
    if (typeof body.description === 'string' && body.description.length > 140) return refuse(res, 422, 'Validation Failed', [{ resource: 'Status', field: 'description', code: 'custom' }]);
    if (!(await (opts.commitExists?.(owner, repo, sha) ?? true))) return refuse(res, 422, `No commit found for SHA: ${sha}`);
    const status: CommitStatus = { sha, state: String(body.state), context: typeof body.context === 'string' ? body.context : 'default', description: (body.description as string) ?? null };
    statuses.push(status);
    return json(res, 201, { id: 9000 + statuses.length, state: status.state, context: status.context, description: status.description });
  }

  // The App's own endpoints, JWT only: GET /app, GET /repos/{o}/{r}/installation, POST /app/installations/{id}/access_tokens.
  async function appRoute(req: http.IncomingMessage, res: http.ServerResponse, url: URL, jwt: string | undefined, raw: Buffer) {
    const app = opts.app;
    if (!app || !jwt) return refuse(res, 401, 'A JSON web token could not be decoded');
    const problem = jwtProblem(jwt, app);
    if (problem) return refuse(res, 401, problem);
    calls.push({ method: req.method!, path: url.pathname, credential: 'jwt' });
    if (req.method === 'GET' && url.pathname === '/app') return json(res, 200, { id: Number(app.id), slug: app.slug, name: app.slug, html_url: `https://github.test/apps/${app.slug}` });
    const inst = /^\/repos\/([^/]+)\/([^/]+)\/installation$/.exec(url.pathname);
    if (req.method === 'GET' && inst) {
      const installation = installations.get(inst[1]!.toLowerCase());
      if (!installation?.repositories.includes(`${inst[1]}/${inst[2]}`.toLowerCase())) return refuse(res, 404, 'Not Found');
      return json(res, 200, { id: installation.id, app_id: Number(app.id), app_slug: app.slug, account: { login: inst[1] }, repository_selection: 'selected', permissions: {} });
    }
    const byId = /^\/app\/installations\/(\d+)$/.exec(url.pathname);
    if (req.method === 'GET' && byId) {
      const installation = [...installations.values()].find((i) => i.id === Number(byId[1]));
      if (!installation) return refuse(res, 404, 'Not Found');
      return json(res, 200, {
        id: installation.id,
        account: { login: installation.login },
        app_id: Number(app.id),
        app_slug: app.slug,
        target_type: 'Organization',
        permissions: { ...grants },
        repository_selection: 'selected',
      });
    }
    const tok = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(url.pathname);
    if (req.method === 'POST' && tok) {
      const installation = [...installations.values()].find((i) => i.id === Number(tok[1]));
      if (!installation) return refuse(res, 404, 'Not Found');
      const body = parse(raw) as TokenRequest | null;
      if (!body) return refuse(res, 400, 'Problems parsing JSON');
      tokenRequests.push({ installationId: installation.id, repositories: body.repositories, permissions: body.permissions });
      const bad = tokenRequestProblem(body, installation.repositories, grants);
      if (bad) return refuse(res, 422, bad);
      const owner = installation.repositories[0]!.split('/')[0]!;
      const repos = body.repositories ? body.repositories.map((r) => `${owner}/${r.toLowerCase()}`) : installation.repositories;
      const permissions = body.permissions ?? { contents: 'write', pull_requests: 'write', checks: 'write', issues: 'write' };
      const t = issueToken(installation.id, repos, { ...permissions, metadata: 'read' }, opts.tokenLifetimeMs);
      issued.push(t);
      return json(res, 201, {
        token: t.token,
        expires_at: new Date(t.expiresAt).toISOString().replace(/\.\d+Z$/, 'Z'),
        permissions: t.permissions,
        repository_selection: 'selected',
        repositories: repos.map((r, i) => ({ id: 300 + i, name: r.split('/')[1], full_name: r })),
      });
    }
    return refuse(res, 404, 'Not Found');
  }

  // docs.github.com/rest/repos/repos#get-a-repository: every repository here is private.
  const repoToApi = (owner: string, repo: string, permissions: ReturnType<typeof repositoryPermissions>) => ({
    id: idOf('repo', `${owner}/${repo}`),
    name: repo,
    full_name: `${owner}/${repo}`,
    owner: { login: owner },
    private: true,
    default_branch: 'main',
    html_url: `https://github.test/${owner}/${repo}`,
    clone_url: `https://github.test/${owner}/${repo}.git`,
    permissions,
  });

  const tokenCovers = (t: IssuedToken, owner: string, repo: string) => t.expiresAt > Date.now() && t.repositories.includes(`${owner}/${repo}`.toLowerCase());
  const tokenGrants = (t: IssuedToken, [name, level]: [string, 'read' | 'write']) => t.permissions[name] === 'write' || (level === 'read' && t.permissions[name] === 'read');

  /** The next armed rate limit this request meets, or a retry too early for the last one: answered here. */
  function rateLimited(req: http.IncomingMessage, res: http.ServerResponse, path: string): boolean {
    const pending = rateLimits.find((r) => r.method === req.method && r.path === path && r.retriedAt === undefined);
    if (pending && Date.now() < pending.retryAt) {
      refuse(res, 403, `You have exceeded a secondary rate limit and were told to wait until ${new Date(pending.retryAt).toISOString()}.`, undefined, {
        'retry-after': String(Math.ceil((pending.retryAt - Date.now()) / 1000)),
      });
      return true;
    }
    if (pending) pending.retriedAt = Date.now();
    const i = armedLimits.findIndex((a) => a.method === req.method && a.path.test(path));
    if (i < 0) return false;
    const [{ answer }] = armedLimits.splice(i, 1) as [(typeof armedLimits)[number]];
    const now = Date.now();
    if (answer.retryAfterSeconds !== undefined) {
      rateLimits.push({ method: req.method!, path, retryAt: now + answer.retryAfterSeconds * 1000 });
      json(
        res,
        answer.status,
        {
          message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
          documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
        },
        { 'retry-after': String(answer.retryAfterSeconds) },
      );
    } else {
      const reset = Math.ceil(now / 1000) + (answer.resetInSeconds ?? 1);
      rateLimits.push({ method: req.method!, path, retryAt: reset * 1000 });
      json(
        res,
        answer.status,
        { message: 'API rate limit exceeded for installation.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api' },
        { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      );
    }
    return true;
  }

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://x');
    if (!/application\/(vnd\.github|json)/.test(String(req.headers.accept ?? ''))) return refuse(res, 415, 'Unsupported Accept header');
    const auth = /^(?:token|bearer) (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (url.pathname === '/app' || url.pathname.startsWith('/app/') || /^\/repos\/[^/]+\/[^/]+\/installation$/.test(url.pathname)) return appRoute(req, res, url, auth, raw);

    // Everything else: an installation token this double issued (App mode) or a personal token (`token`, `tokens`).
    let token: IssuedToken | undefined;
    if (opts.app) {
      token = issued.find((t) => t.token === auth);
      if (token && token.expiresAt <= Date.now()) return refuse(res, 401, 'Bad credentials');
    }
    const pat = token ? undefined : personal(auth);
    if (!token && !pat) {
      // Without credentials a private repository is not there; GET /user needs them.
      if (!auth && req.method === 'GET' && /^\/repos\/[^/]+\/[^/]+$/.test(url.pathname)) return refuse(res, 404, 'Not Found');
      if (!auth && req.method === 'GET' && url.pathname === '/user') return refuse(res, 401, 'Requires authentication');
      return refuse(res, 401, 'Bad credentials');
    }
    const credentialId = token ? `installation:${token.installationId}` : pat!.credentialId;
    if (rateLimited(req, res, url.pathname)) return;
    const hold = armedHolds.findIndex((h) => h.call.method === req.method && h.call.path.test(url.pathname));
    if (hold >= 0) {
      const [{ call, ms }] = armedHolds.splice(hold, 1) as [(typeof armedHolds)[number]];
      call.arrivedAt = Date.now();
      res.on('finish', () => {
        call.answeredAt = Date.now();
      });
      await new Promise((r) => setTimeout(r, ms));
    }

    // docs.github.com/rest/users/users#get-the-authenticated-user: a user's token; an installation has no user.
    if (req.method === 'GET' && url.pathname === '/user') {
      record({ method: req.method, path: url.pathname, credential: token ? 'installation' : 'token', ...(token ? { scope: token.repositories } : {}) }, credentialId);
      if (!pat) return refuse(res, 403, 'Resource not accessible by integration');
      return json(res, 200, { login: pat.login, id: idOf('user', pat.login), type: 'User' });
    }
    const repoPath = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(url.pathname);
    if (!repoPath || (repoPath[3] === undefined && req.method !== 'GET')) return refuse(res, 404, 'Not Found');
    const [, owner, repo] = repoPath as unknown as [string, string, string];
    const rest = repoPath[3] ?? '';
    // A token sees only its repositories (an installation's, a personal token's owners'): any other is "Not Found", as on GitHub.
    if (token && !tokenCovers(token, owner, repo)) return refuse(res, 404, 'Not Found');
    if (pat && !reaches(pat, owner)) return refuse(res, 404, 'Not Found');
    if (!(await opts.repoExists(owner, repo))) return refuse(res, 404, 'Not Found');
    record({ method: req.method!, path: url.pathname, credential: token ? 'installation' : 'token', ...(token ? { scope: token.repositories } : {}) }, credentialId);
    const needs = (permission: [string, 'read' | 'write']) => {
      if (token ? tokenGrants(token, permission) : pat!.write || permission[1] === 'read') return true;
      refuse(res, 403, token ? 'Resource not accessible by integration' : 'Resource not accessible by personal access token');
      return false;
    };
    const write = req.method !== 'GET';

    const plugged = opts.routes?.find((r) => r.method === req.method && r.path.test(url.pathname));
    if (plugged) {
      if (plugged.permission && !needs(plugged.permission)) return;
      const match = plugged.path.exec(url.pathname)!;
      return plugged.handle({
        req,
        res,
        url,
        match,
        body: raw,
        json: (status, body, headers) => json(res, status, body, headers),
        refuse: (status, message, errors) => refuse(res, status, message, errors),
      });
    }
    if (rest === '' && req.method === 'GET') {
      const permissions = token ? repositoryPermissions(token.permissions) : { admin: false, maintain: false, push: pat!.write, triage: pat!.write, pull: true };
      return json(res, 200, repoToApi(owner, repo, permissions));
    }
    const issue = /^\/issues\/(\d+)\/comments$/.exec(rest);
    if (issue && (req.method === 'GET' || req.method === 'POST')) {
      if (!needs(['issues', write ? 'write' : 'read'])) return;
      return issueComments(req, res, url, owner, repo, Number(issue[1]), raw);
    }
    if (rest === '/pulls' && (req.method === 'GET' || req.method === 'POST')) {
      if (!needs(['pull_requests', write ? 'write' : 'read'])) return;
      return pullsRoute(req, res, url, owner, repo, raw);
    }
    const run = /^\/check-runs(?:\/(\d+))?$/.exec(rest);
    if (run && ((req.method === 'POST' && !run[1]) || (req.method === 'PATCH' && run[1]))) {
      // Only an App may write check runs; a personal token gets 403 on GitHub.
      if (!token) return refuse(res, 403, 'You must authenticate via a GitHub App.');
      if (!needs(['checks', 'write'])) return;
      return checkRunsRoute(res, owner, repo, run[1] ? Number(run[1]) : undefined, raw);
    }
    const forRef = /^\/commits\/([^/]+)\/check-runs$/.exec(rest);
    if (forRef && req.method === 'GET') {
      if (!needs(['checks', 'read'])) return;
      const name = url.searchParams.get('check_name');
      const found = checkRuns.filter((r) => r.headSha === forRef[1] && (!name || r.name === name)).map((r) => runToApi(r, owner, repo));
      return page(res, url, found, (slice) => ({ total_count: found.length, check_runs: slice }));
    }
    const status = /^\/statuses\/([0-9a-f]{40})$/.exec(rest);
    if (status && req.method === 'POST') {
      if (!needs(['statuses', 'write'])) return;
      return statusRoute(res, owner, repo, status[1]!, raw);
    }
    return refuse(res, 404, 'Not Found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    apiUrl,
    pulls,
    comments,
    rejected,
    calls,
    tokenRequests,
    issuedTokens: () => issued.map((t) => t.token),
    checkRuns,
    statuses,
    rateLimits,
    refuseNextCreate: () => {
      refuseCreate = true;
    },
    refuseDrafts: (on = true) => {
      draftsRefused = on;
    },
    rateLimitNext: (method, path, answer) => {
      armedLimits.push({ method, path, answer });
    },
    holdNext: (method, path, ms) => {
      const call: HeldCall = { method, path };
      armedHolds.push({ call, ms });
      return call;
    },
    setMaxPerPage: (n) => {
      maxPerPage = n;
    },
    install: (owner, name) => {
      const key = owner.toLowerCase();
      const installation = installations.get(key) ?? { id: 40_000 + installationsMade++, login: owner, repositories: [] };
      installation.repositories.push(`${owner}/${name}`.toLowerCase());
      installations.set(key, installation);
    },
    uninstall: (owner, name) => {
      const key = owner.toLowerCase();
      const installation = installations.get(key);
      if (!installation) return;
      installation.repositories = installation.repositories.filter((r) => r !== `${owner}/${name}`.toLowerCase());
      if (installation.repositories.length > 0) return;
      installations.delete(key);
      for (const t of issued) if (t.installationId === installation.id) t.expiresAt = 0;
    },
    expireTokens: () => {
      for (const t of issued) t.expiresAt = Math.min(t.expiresAt, Date.now());
    },
    setGrants: (next) => {
      grants = { ...next };
    },
    installationOf: (owner) => installations.get(owner.toLowerCase())?.id,
    gitAllows: (token, owner, name, push) => {
      const t = issued.find((x) => x.token === token);
      if (t) return tokenCovers(t, owner, name) && tokenGrants(t, ['contents', push ? 'write' : 'read']);
      const p = personal(token);
      return !!p && reaches(p, owner) && (!push || p.write);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
