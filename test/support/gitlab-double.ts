// A GitLab at the HTTP boundary: REST v4 as GitLab answers it (PRIVATE-TOKEN or Bearer, URL-encoded project paths,
// 401/403/404 as GitLab gives them, 409 for a second open merge request on a source branch, offset pagination with
// x-next-page and link headers, keyset with link alone), git over HTTPS through the real test git server (user
// `oauth2`, the token as password, Developer to push), and project hooks delivered as GitLab does (its payload shapes,
// X-Gitlab-Token, X-Gitlab-Event, X-Gitlab-Event-UUID, Idempotency-Key).
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGitServer, type GitServer } from './git-server';

/** GitLab's access levels. */
export const access = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;

interface User {
  id: number;
  username: string;
  token: string;
}
interface Note {
  id: number;
  body: string;
  authorId: number;
  system: boolean;
  awards: Array<{ name: string; userId: number }>;
}
export interface DoubleMergeRequest {
  id: number;
  iid: number;
  title: string;
  description: string;
  state: 'opened' | 'closed' | 'merged';
  source_branch: string;
  target_branch: string;
  authorId: number;
  notes: Note[];
  mergeCommit?: string;
  diff?: string;
}
interface Hook {
  id: number;
  url: string;
  token?: string;
  note_events: boolean;
  merge_requests_events: boolean;
  push_events: boolean;
  issues_events: boolean;
}
interface Issue {
  iid: number;
  title: string;
  description: string;
  labels: string[];
  notes: Note[];
  awards: Array<{ name: string; userId: number }>;
}
interface Project {
  id: number;
  owner: string;
  name: string;
  members: Map<number, number>;
  mergeRequests: DoubleMergeRequest[];
  issues: Issue[];
  hooks: Hook[];
  statuses: Array<{ sha: string; name: string; state: string; description?: string }>;
}

/** A delivery the double sent, and what the receiver answered. */
export interface SentHook {
  event: string;
  status: number;
  body: string;
}

export interface GitLabDouble {
  /** The server's one address: the API at `${url}/api/v4`, repositories at `${url}/owner/name.git`. */
  url: string;
  git: GitServer;
  /** A user with a token of their own; `level` on each project named (GitLab's access levels). */
  addUser(username: string, levels?: Record<string, number>): User;
  /** A private project with one commit on `main`. */
  createProject(path: string, files: Record<string, string>): Promise<void>;
  mergeRequests(path: string): DoubleMergeRequest[];
  mergeRequest(path: string, iid: number): DoubleMergeRequest;
  statuses(path: string): Project['statuses'];
  issue(path: string, iid: number): Issue;
  hooks(path: string): Hook[];
  /** What each hook delivery got as its answer, oldest first. */
  sent: SentHook[];
  /** Every request the API saw: method, path and the credential header's presence (never its value). */
  requests: Array<{ method: string; path: string }>;
  /** As the user would in GitLab's page: each one sends its hooks and answers what the API would. */
  as(username: string): {
    note(path: string, iid: number, body: string): Promise<Note>;
    noteOnIssue(path: string, iid: number, body: string): Promise<Note>;
    openMergeRequest(path: string, source: string, title: string): Promise<DoubleMergeRequest>;
    merge(path: string, iid: number): Promise<void>;
    close(path: string, iid: number): Promise<void>;
    labelIssue(path: string, iid: number, labels: string[]): Promise<void>;
    openIssue(path: string, title: string, description: string): Promise<number>;
  };
  close(): Promise<void>;
}

const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

async function readBody(req: http.IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return {};
  return (req.headers['content-type'] ?? '').includes('json') ? JSON.parse(text) : Object.fromEntries(new URLSearchParams(text));
}

export async function startGitLabDouble(): Promise<GitLabDouble> {
  const git = await startGitServer();
  const users: User[] = [];
  const projects: Project[] = [];
  const sent: SentHook[] = [];
  const requests: GitLabDouble['requests'] = [];
  let nextId = 100;
  let url = '';

  const userByToken = (token: string | undefined) => (token ? users.find((u) => u.token === token) : undefined);
  const projectOf = (path: string) => {
    const p = projects.find((x) => `${x.owner}/${x.name}`.toLowerCase() === path.toLowerCase());
    if (!p) throw new Error(`no project ${path}`);
    return p;
  };
  const levelOf = (p: Project, u: User) => p.members.get(u.id) ?? 0;
  const userJson = (u: User) => ({ id: u.id, username: u.username, name: u.username, state: 'active', avatar_url: null, web_url: `${url}/${u.username}` });
  const projectJson = (p: Project, u?: User) => ({
    id: p.id,
    name: p.name,
    path: p.name,
    path_with_namespace: `${p.owner}/${p.name}`,
    web_url: `${url}/${p.owner}/${p.name}`,
    http_url_to_repo: `${url}/${p.owner}/${p.name}.git`,
    default_branch: 'main',
    visibility: 'private',
    ...(u ? { permissions: { project_access: levelOf(p, u) ? { access_level: levelOf(p, u) } : null, group_access: null } } : {}),
  });
  const mrUrl = (p: Project, m: DoubleMergeRequest) => `${url}/${p.owner}/${p.name}/-/merge_requests/${m.iid}`;
  const head = async (p: Project, branch: string) => (await git.git(p.owner, p.name, 'rev-parse', `refs/heads/${branch}`)).trim();
  const mrJson = (p: Project, m: DoubleMergeRequest) => ({
    id: m.id,
    iid: m.iid,
    project_id: p.id,
    title: m.title,
    description: m.description,
    state: m.state,
    draft: /^(draft:|\[draft\]|\(draft\))/i.test(m.title),
    source_branch: m.source_branch,
    target_branch: m.target_branch,
    source_project_id: p.id,
    target_project_id: p.id,
    merge_commit_sha: m.mergeCommit ?? null,
    web_url: mrUrl(p, m),
    author: userJson(users.find((u) => u.id === m.authorId)!),
  });

  /** Sends a hook event to every project hook that asked for it, as GitLab does: the token in X-Gitlab-Token. */
  async function deliver(p: Project, event: string, flag: keyof Omit<Hook, 'id' | 'url' | 'token'>, payload: unknown): Promise<void> {
    for (const h of p.hooks.filter((x) => x[flag])) {
      const uuid = randomUUID();
      const res = await fetch(h.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'GitLab/17.6.0',
          'x-gitlab-event': event,
          'x-gitlab-event-uuid': uuid,
          'x-gitlab-webhook-uuid': randomUUID(),
          'idempotency-key': uuid,
          'x-gitlab-instance': url,
          ...(h.token ? { 'x-gitlab-token': h.token } : {}),
        },
        body: JSON.stringify(payload),
      }).catch(() => null);
      sent.push({ event, status: res?.status ?? 0, body: res ? await res.text() : '' });
    }
  }
  const hookProject = (p: Project) => ({ id: p.id, name: p.name, path_with_namespace: `${p.owner}/${p.name}`, web_url: `${url}/${p.owner}/${p.name}`, default_branch: 'main' });
  const hookUser = (u: User) => ({ id: u.id, name: u.username, username: u.username, avatar_url: null, email: '[REDACTED]' });
  const hookRepository = (p: Project) => ({ name: p.name, url: `${url}/${p.owner}/${p.name}.git`, homepage: `${url}/${p.owner}/${p.name}` });
  async function mrHookAttributes(p: Project, m: DoubleMergeRequest, action: string) {
    const sha = await head(p, m.source_branch).catch(() => '');
    const ends = { path_with_namespace: `${p.owner}/${p.name}`, name: p.name };
    return {
      id: m.id,
      iid: m.iid,
      title: m.title,
      description: m.description,
      state: m.state,
      action,
      source_branch: m.source_branch,
      target_branch: m.target_branch,
      source_project_id: p.id,
      target_project_id: p.id,
      merge_commit_sha: m.mergeCommit ?? null,
      url: mrUrl(p, m),
      last_commit: { id: sha, message: '' },
      source: ends,
      target: ends,
    };
  }
  async function mrHook(p: Project, m: DoubleMergeRequest, u: User, action: string) {
    await deliver(p, 'Merge Request Hook', 'merge_requests_events', {
      object_kind: 'merge_request',
      event_type: 'merge_request',
      user: hookUser(u),
      project: hookProject(p),
      object_attributes: await mrHookAttributes(p, m, action),
      labels: [],
      changes: {},
      repository: hookRepository(p),
    });
  }

  /** What the API answers; `user` is the token's, already checked. */
  async function api(method: string, path: string, query: URLSearchParams, body: any, user: User, res: http.ServerResponse): Promise<void> {
    if (method === 'GET' && path === '/user') return send(res, 200, userJson(user));
    if (method === 'GET' && path === '/users') return send(res, 200, users.filter((u) => u.username === query.get('username')).map(userJson));
    const m = /^\/projects\/([^/]+)(\/.*)?$/.exec(path);
    if (!m) return send(res, 404, { error: '404 Not Found' });
    const id = m[1]!;
    // GitLab takes a project's id or its path URL-encoded (`acme%2Fwidgets`); a bare `/` would be another route.
    const p = /^\d+$/.test(id) ? projects.find((x) => x.id === Number(id)) : projects.find((x) => `${x.owner}/${x.name}`.toLowerCase() === decodeURIComponent(id).toLowerCase());
    const level = p ? levelOf(p, user) : 0;
    if (!p || level < access.guest) return send(res, 404, { message: '404 Project Not Found' });
    const rest = m[2] ?? '';
    const need = (min: number) => {
      if (level >= min) return true;
      send(res, 403, { message: '403 Forbidden' });
      return false;
    };
    if (method === 'GET' && rest === '') return send(res, 200, projectJson(p, user));
    const member = /^\/members\/all\/(\d+)$/.exec(rest);
    if (member && method === 'GET') {
      const u = users.find((x) => x.id === Number(member[1]));
      const l = u ? p.members.get(u.id) : undefined;
      return l ? send(res, 200, { ...userJson(u!), access_level: l }) : send(res, 404, { message: '404 Not found' });
    }
    if (rest === '/merge_requests' && method === 'GET') {
      let list = p.mergeRequests.filter((x) => (query.get('state') ?? 'all') === 'all' || x.state === query.get('state'));
      if (query.has('source_branch')) list = list.filter((x) => x.source_branch === query.get('source_branch'));
      return page(
        res,
        query,
        path,
        [...list].reverse().map((x) => mrJson(p, x)),
      );
    }
    if (rest === '/merge_requests' && method === 'POST') {
      if (!need(access.developer)) return;
      if (!body.source_branch || !body.target_branch || !body.title) return send(res, 400, { message: 'source_branch, target_branch, title are missing' });
      const taken = p.mergeRequests.find((x) => x.state === 'opened' && x.source_branch === body.source_branch && x.target_branch === body.target_branch);
      if (taken) return send(res, 409, { message: [`Another open merge request already exists for this source branch: !${taken.iid}`] });
      if (!(await head(p, body.source_branch).catch(() => ''))) return send(res, 422, { message: ['Source branch does not exist'] });
      const made: DoubleMergeRequest = {
        id: nextId++,
        iid: p.mergeRequests.length + 1,
        title: body.title,
        description: body.description ?? '',
        state: 'opened',
        source_branch: body.source_branch,
        target_branch: body.target_branch,
        authorId: user.id,
        notes: [],
      };
      p.mergeRequests.push(made);
      send(res, 201, mrJson(p, made));
      return mrHook(p, made, user, 'open');
    }
    const mrRoute = /^\/merge_requests\/(\d+)(\/.*)?$/.exec(rest);
    if (mrRoute) {
      const mr = p.mergeRequests.find((x) => x.iid === Number(mrRoute[1]));
      if (!mr) return send(res, 404, { message: '404 Not found' });
      const sub = mrRoute[2] ?? '';
      if (sub === '' && method === 'GET') return send(res, 200, mrJson(p, mr));
      if (sub === '/diffs' && method === 'GET') return page(res, query, path, splitDiff(mr.diff ?? (await liveDiff(p, mr))));
      if (sub === '/notes') return notes(method, mr.notes, body, user, query, path, res, (n) => noteHook(p, user, n, { type: 'MergeRequest', mr }));
      const award = /^\/notes\/(\d+)\/award_emoji$/.exec(sub);
      if (award && method === 'POST') return awardOn(mr.notes.find((n) => n.id === Number(award[1]))?.awards, body, user, res);
    }
    const issueRoute = /^\/issues\/(\d+)(\/.*)?$/.exec(rest);
    if (issueRoute) {
      const issue = p.issues.find((x) => x.iid === Number(issueRoute[1]));
      if (!issue) return send(res, 404, { message: '404 Not found' });
      const sub = issueRoute[2] ?? '';
      if (sub === '/notes') return notes(method, issue.notes, body, user, query, path, res, (n) => noteHook(p, user, n, { type: 'Issue', issue }));
      if (sub === '/award_emoji' && method === 'POST') return awardOn(issue.awards, body, user, res);
      const award = /^\/notes\/(\d+)\/award_emoji$/.exec(sub);
      if (award && method === 'POST') return awardOn(issue.notes.find((n) => n.id === Number(award[1]))?.awards, body, user, res);
    }
    const statusRoute = /^\/statuses\/([0-9a-f]{40})$/.exec(rest);
    if (statusRoute && method === 'POST') {
      if (!need(access.developer)) return;
      if (!['pending', 'running', 'success', 'failed', 'canceled', 'skipped'].includes(body.state)) return send(res, 400, { message: 'state does not have a valid value' });
      const name = body.name ?? body.context ?? 'default';
      const last = p.statuses.filter((s) => s.sha === statusRoute[1] && s.name === name).at(-1);
      if (last?.state === body.state)
        return send(res, 400, {
          message: `Cannot transition status via :${body.state === 'success' ? 'succeed' : 'drop'} from :${last?.state} (Reason(s): Status cannot transition via "${body.state}")`,
        });
      p.statuses.push({ sha: statusRoute[1]!, name, state: body.state, description: body.description });
      return send(res, 201, { id: nextId++, sha: statusRoute[1], name, status: body.state, description: body.description ?? null });
    }
    if (rest === '/hooks') {
      if (!need(access.maintainer)) return;
      if (method === 'GET') return page(res, query, path, p.hooks.map(hookJson));
      if (method === 'POST') {
        const h: Hook = {
          id: nextId++,
          url: body.url,
          token: body.token,
          note_events: !!body.note_events,
          merge_requests_events: !!body.merge_requests_events,
          push_events: body.push_events !== false,
          issues_events: !!body.issues_events,
        };
        p.hooks.push(h);
        return send(res, 201, hookJson(h));
      }
    }
    const hookRoute = /^\/hooks\/(\d+)$/.exec(rest);
    if (hookRoute && method === 'PUT') {
      if (!need(access.maintainer)) return;
      const h = p.hooks.find((x) => x.id === Number(hookRoute[1]));
      if (!h) return send(res, 404, { message: '404 Not found' });
      Object.assign(h, { url: body.url ?? h.url, ...(body.token !== undefined ? { token: body.token } : {}) });
      for (const k of ['note_events', 'merge_requests_events', 'push_events', 'issues_events'] as const) if (body[k] !== undefined) h[k] = !!body[k];
      return send(res, 200, hookJson(h));
    }
    return send(res, 404, { error: '404 Not Found' });
  }

  // The hook's token is write-only in GitLab's API: never listed back.
  const hookJson = (h: Hook) => ({ id: h.id, url: h.url, note_events: h.note_events, merge_requests_events: h.merge_requests_events, push_events: h.push_events, issues_events: h.issues_events });

  async function notes(method: string, list: Note[], body: any, user: User, query: URLSearchParams, path: string, res: http.ServerResponse, hook: (n: Note) => Promise<void>) {
    if (method === 'GET')
      return page(
        res,
        query,
        path,
        (query.get('sort') === 'desc' ? [...list].reverse() : list).map((n) => noteJson(n)),
      );
    if (method !== 'POST') return send(res, 405, { message: '405 Method Not Allowed' });
    if (!body.body) return send(res, 400, { message: 'body is missing' });
    const n: Note = { id: nextId++, body: body.body, authorId: user.id, system: false, awards: [] };
    list.push(n);
    send(res, 201, noteJson(n));
    await hook(n);
  }
  const noteJson = (n: Note) => ({ id: n.id, body: n.body, system: n.system, author: userJson(users.find((u) => u.id === n.authorId)!) });

  function awardOn(awards: Note['awards'] | undefined, body: any, user: User, res: http.ServerResponse) {
    if (!awards) return send(res, 404, { message: '404 Not found' });
    if (awards.some((a) => a.name === body.name && a.userId === user.id)) return send(res, 404, { message: '404 Award Emoji Name has already been taken Not Found' });
    awards.push({ name: body.name, userId: user.id });
    return send(res, 201, { id: nextId++, name: body.name, user: userJson(user) });
  }

  async function noteHook(p: Project, u: User, n: Note, on: { type: 'MergeRequest'; mr: DoubleMergeRequest } | { type: 'Issue'; issue: Issue }) {
    const noteable =
      on.type === 'MergeRequest'
        ? { merge_request: await mrHookAttributes(p, on.mr, 'update') }
        : {
            issue: {
              id: on.issue.iid + 1000,
              iid: on.issue.iid,
              title: on.issue.title,
              description: on.issue.description,
              state: 'opened',
              url: `${url}/${p.owner}/${p.name}/-/issues/${on.issue.iid}`,
            },
          };
    await deliver(p, 'Note Hook', 'note_events', {
      object_kind: 'note',
      event_type: 'note',
      user: hookUser(u),
      project_id: p.id,
      project: hookProject(p),
      object_attributes: { id: n.id, note: n.body, noteable_type: on.type, author_id: u.id, project_id: p.id, system: n.system, action: 'create', url: `${url}/${p.owner}/${p.name}#note_${n.id}` },
      repository: hookRepository(p),
      ...noteable,
    });
  }

  /** Offset pagination as GitLab sends it (x-page, x-per-page, x-next-page, x-total, link); keyset (`pagination=keyset`) with link alone. */
  function page(res: http.ServerResponse, query: URLSearchParams, path: string, items: unknown[]) {
    const perPage = Math.min(Math.max(Number(query.get('per_page') ?? 20) || 20, 1), 100);
    const keyset = query.get('pagination') === 'keyset';
    const start = keyset ? Number(query.get('id_after') ?? 0) : (Math.max(Number(query.get('page') ?? 1) || 1, 1) - 1) * perPage;
    const slice = items.slice(start, start + perPage);
    const more = start + perPage < items.length;
    const next = new URLSearchParams(query);
    if (keyset) next.set('id_after', String(start + perPage));
    else next.set('page', String(start / perPage + 2));
    const headers: Record<string, string> = more ? { link: `<${url}/api/v4${path}?${next}>; rel="next"` } : {};
    if (!keyset)
      Object.assign(headers, { 'x-page': String(start / perPage + 1), 'x-per-page': String(perPage), 'x-next-page': more ? String(start / perPage + 2) : '', 'x-total': String(items.length) });
    return send(res, 200, slice, headers);
  }

  async function liveDiff(p: Project, mr: DoubleMergeRequest): Promise<string> {
    return git.git(p.owner, p.name, 'diff', `${mr.target_branch}...${mr.source_branch}`).catch(() => '');
  }
  function splitDiff(diff: string) {
    return diff
      .split(/^(?=diff --git )/m)
      .filter((d) => d.startsWith('diff --git '))
      .map((d) => {
        const [, oldPath, newPath] = /^diff --git a\/(\S+) b\/(\S+)/.exec(d) ?? [];
        return {
          old_path: oldPath,
          new_path: newPath,
          new_file: /\nnew file mode/.test(d),
          deleted_file: /\ndeleted file mode/.test(d),
          renamed_file: oldPath !== newPath,
          diff: d.slice(d.indexOf('@@')),
        };
      });
  }

  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (/\.git\//.test(u.pathname)) return proxyGit(req, res);
    if (!u.pathname.startsWith('/api/v4/')) return send(res, 404, { error: '404 Not Found' });
    const path = u.pathname.slice('/api/v4'.length);
    requests.push({ method: req.method ?? 'GET', path });
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const given = (req.headers['private-token'] as string | undefined) ?? bearer;
    const user = userByToken(given);
    if (!user) return send(res, 401, { message: '401 Unauthorized' });
    // GitLab routes on the raw path: a project path must arrive URL-encoded (`acme%2Fwidgets`).
    readBody(req)
      .then((body) => api(req.method ?? 'GET', path, u.searchParams, body, user, res))
      .catch((err: unknown) => send(res, 500, { message: String(err) }));
  });

  /** git over HTTPS: GitLab's own host, handed to the real git server with the same Authorization. */
  function proxyGit(req: http.IncomingMessage, res: http.ServerResponse) {
    const target = new URL(git.url);
    const forward = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // What GitLab checks on git: the token's user, Reporter to fetch, Developer to push.
  git.acceptTokens((token, owner, name, push) => {
    const u = userByToken(token);
    const p = projects.find((x) => x.owner === owner && x.name === name);
    return !!u && !!p && levelOf(p, u) >= (push ? access.developer : access.reporter);
  }, 'oauth2');

  const byName = (username: string) => {
    const u = users.find((x) => x.username === username);
    if (!u) throw new Error(`no user ${username}`);
    return u;
  };

  return {
    get url() {
      return url;
    },
    git,
    sent,
    requests,
    addUser(username, levels = {}) {
      const u: User = { id: nextId++, username, token: `glpat-${randomBytes(10).toString('hex')}` };
      users.push(u);
      for (const [path, level] of Object.entries(levels)) projectOf(path).members.set(u.id, level);
      return u;
    },
    async createProject(path, files) {
      const [owner, name] = path.split('/') as [string, string];
      await git.createRepo(owner, name, files);
      projects.push({ id: nextId++, owner, name, members: new Map(), mergeRequests: [], issues: [], hooks: [], statuses: [] });
    },
    mergeRequests: (path) => projectOf(path).mergeRequests,
    mergeRequest: (path, iid) => projectOf(path).mergeRequests.find((x) => x.iid === iid)!,
    statuses: (path) => projectOf(path).statuses,
    issue: (path, iid) => projectOf(path).issues.find((x) => x.iid === iid)!,
    hooks: (path) => projectOf(path).hooks,
    as(username) {
      const u = byName(username);
      return {
        async note(path, iid, body) {
          const p = projectOf(path);
          const mr = p.mergeRequests.find((x) => x.iid === iid)!;
          const n: Note = { id: nextId++, body, authorId: u.id, system: false, awards: [] };
          mr.notes.push(n);
          await noteHook(p, u, n, { type: 'MergeRequest', mr });
          return n;
        },
        async noteOnIssue(path, iid, body) {
          const p = projectOf(path);
          const issue = p.issues.find((x) => x.iid === iid)!;
          const n: Note = { id: nextId++, body, authorId: u.id, system: false, awards: [] };
          issue.notes.push(n);
          await noteHook(p, u, n, { type: 'Issue', issue });
          return n;
        },
        async openMergeRequest(path, source, title) {
          const p = projectOf(path);
          const made: DoubleMergeRequest = {
            id: nextId++,
            iid: p.mergeRequests.length + 1,
            title,
            description: '',
            state: 'opened',
            source_branch: source,
            target_branch: 'main',
            authorId: u.id,
            notes: [],
          };
          p.mergeRequests.push(made);
          await mrHook(p, made, u, 'open');
          return made;
        },
        async merge(path, iid) {
          const p = projectOf(path);
          const mr = p.mergeRequests.find((x) => x.iid === iid)!;
          mr.diff = await liveDiff(p, mr);
          const sha = await head(p, mr.source_branch);
          // A fast-forward merge (the branch starts from the target's head).
          await git.git(p.owner, p.name, 'update-ref', `refs/heads/${mr.target_branch}`, sha);
          Object.assign(mr, { state: 'merged', mergeCommit: sha });
          await mrHook(p, mr, u, 'merge');
        },
        async close(path, iid) {
          const p = projectOf(path);
          const mr = p.mergeRequests.find((x) => x.iid === iid)!;
          mr.state = 'closed';
          await mrHook(p, mr, u, 'close');
        },
        async openIssue(path, title, description) {
          const p = projectOf(path);
          const issue: Issue = { iid: p.issues.length + 1, title, description, labels: [], notes: [], awards: [] };
          p.issues.push(issue);
          return issue.iid;
        },
        async labelIssue(path, iid, labels) {
          const p = projectOf(path);
          const issue = p.issues.find((x) => x.iid === iid)!;
          const previous = issue.labels.map((title) => ({ title }));
          issue.labels = [...new Set([...issue.labels, ...labels])];
          await deliver(p, 'Issue Hook', 'issues_events', {
            object_kind: 'issue',
            event_type: 'issue',
            user: hookUser(u),
            project: hookProject(p),
            object_attributes: { id: iid + 1000, iid, title: issue.title, description: issue.description, state: 'opened', action: 'update', url: `${url}/${p.owner}/${p.name}/-/issues/${iid}` },
            labels: issue.labels.map((title) => ({ title })),
            changes: { labels: { previous, current: issue.labels.map((title) => ({ title })) } },
            repository: hookRepository(p),
          });
        },
      };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await git.close();
    },
  };
}
