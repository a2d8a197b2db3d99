// The `gitlab` kind behind the forge interface (src/forges/forge.ts): gitlab.com and self-managed GitLab, REST v4, with
// a personal, group or project access token (`PRIVATE-TOKEN`). A pull request is a merge request numbered by its `iid`,
// a draft is the `Draft:` title prefix, checks are the commit status `docent`, a comment is a note, the 👀 reaction is the
// award emoji `eyes`, and who may steer is the member's access level (Developer, 30, or more). Webhooks carry the
// connection's secret in X-Gitlab-Token; GitLab's event names and payloads are translated here into the ones docent reads.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ForgeRequestError, forgeRequest, forgeStatus } from '../forge-http';
import type { ChecksReport, Forge, ForgeRepository, ForgeWebhooks, NewPullRequest, PullRequestRef, ReactionTarget, RepositoryPermission, WebhookRegistration } from '../forge';
import { normalizeGitLabEvent } from './gitlab-events';

/** GitLab's largest page. */
const pageSize = 100;
/** Developer: the lowest access level that may push to a project (GitLab's Gitlab::Access). */
export const developerAccess = 30;
const roleNames: Record<number, string> = { 0: 'none', 5: 'Minimal Access', 10: 'Guest', 15: 'Planner', 20: 'Reporter', 30: 'Developer', 40: 'Maintainer', 50: 'Owner' };
/** The title prefix GitLab reads as a draft. */
const draftPrefix = 'Draft: ';
/** The name of docent's commit status. */
const statusName = 'docent';

const header = (headers: IncomingHttpHeaders, name: string) => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** GitLab's webhooks: the secret itself in X-Gitlab-Token, the event in X-Gitlab-Event, the delivery in Idempotency-Key (GitLab 17.4+) or X-Gitlab-Event-UUID. */
export const gitlabWebhooks: ForgeWebhooks = {
  signatureHeader: 'X-Gitlab-Token',
  async verify(secret, _body, headers) {
    const given = header(headers, 'x-gitlab-token');
    // Digests of equal length, compared in constant time: neither the secret's length nor its prefix leaks.
    return given !== undefined && timingSafeEqual(digest(given), digest(secret));
  },
  read: (headers) => ({ id: header(headers, 'idempotency-key') ?? header(headers, 'x-gitlab-event-uuid'), event: header(headers, 'x-gitlab-event') }),
  normalize: normalizeGitLabEvent,
};

/** One token's calls to one GitLab server's API. */
class GitLabApi {
  constructor(
    private readonly apiUrl: string,
    private readonly token: string | undefined,
  ) {}

  request<T>(method: string, path: string, body?: unknown): Promise<{ data: T; headers: Headers }> {
    const auth: Record<string, string> = this.token ? { 'private-token': this.token } : {};
    return forgeRequest<T>({ forge: 'GitLab', apiUrl: this.apiUrl, auth, method, path, body });
  }

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await this.request<T>(method, path, body)).data;
  }

  /** Every page of a list, up to `max` items: offset pagination's `x-next-page`, or keyset's `link: <…>; rel="next"`. */
  async all<T>(path: string, max = 1000): Promise<T[]> {
    const out: T[] = [];
    let next: string | null = `${path}${path.includes('?') ? '&' : '?'}per_page=${pageSize}`;
    while (next && out.length < max) {
      const { data, headers }: { data: T[]; headers: Headers } = await this.request<T[]>('GET', next);
      out.push(...data);
      next = nextPage(next, headers, this.apiUrl);
    }
    return out;
  }
}

/** The next page's path: keyset's `link` header (a full URL on the same API), else offset's `x-next-page`. */
function nextPage(current: string, headers: Headers, apiUrl: string): string | null {
  const link = /<([^>]+)>;\s*rel="next"/.exec(headers.get('link') ?? '')?.[1];
  if (link?.startsWith(apiUrl)) return link.slice(apiUrl.length);
  const page = headers.get('x-next-page');
  if (!page || !/^\d+$/.test(page)) return null;
  const [p, q = ''] = current.split('?');
  const params = new URLSearchParams(q);
  params.set('page', page);
  return `${p}?${params}`;
}

const status = forgeStatus;
const message = (err: unknown) => (err instanceof ForgeRequestError ? JSON.stringify(err.response.data) : '');

interface GitLabMergeRequest {
  iid: number;
  web_url: string;
  state: string;
  source_branch: string;
  source_project_id: number;
  target_project_id: number;
}

/** The role GitLab names for an access level, as a delivery's reason says it. */
export const roleOf = (level: number) => roleNames[level] ?? `access level ${level}`;

class GitLabRepository implements ForgeRepository {
  /** The project as GitLab's API names it: `owner%2Fname`. */
  private readonly at: string;

  constructor(
    private readonly api: GitLabApi,
    readonly owner: string,
    readonly name: string,
  ) {
    this.at = `/projects/${encodeURIComponent(`${owner}/${name}`)}`;
  }

  private ref(mr: GitLabMergeRequest): PullRequestRef {
    return { url: mr.web_url, number: mr.iid };
  }

  /** Only a merge request from a branch of this project itself, never a fork's of the same name. */
  async openPullRequestOf(branch: string): Promise<PullRequestRef | null> {
    const open = await this.api.all<GitLabMergeRequest>(`${this.at}/merge_requests?state=opened&source_branch=${encodeURIComponent(branch)}`);
    const mr = open.find((m) => m.source_branch === branch && m.source_project_id === m.target_project_id);
    return mr ? this.ref(mr) : null;
  }

  /** A draft is titled `Draft: …`, which GitLab shows as a draft and will not merge until it is marked ready. */
  async openPullRequest(pr: NewPullRequest): Promise<PullRequestRef> {
    const existing = await this.openPullRequestOf(pr.head);
    if (existing) return existing;
    try {
      const made = await this.api.call<GitLabMergeRequest>('POST', `${this.at}/merge_requests`, {
        source_branch: pr.head,
        target_branch: pr.base,
        title: pr.draft ? `${draftPrefix}${pr.title}` : pr.title,
        description: pr.body(pr.draft),
      });
      return this.ref(made);
    } catch (err) {
      // 409: another open merge request already has this source branch (two attempts raced).
      if (status(err) === 409) {
        const raced = await this.openPullRequestOf(pr.head).catch(() => null);
        if (raced) return raced;
      }
      throw err;
    }
  }

  async pullRequest(number: number) {
    let mr: GitLabMergeRequest;
    try {
      mr = await this.api.call<GitLabMergeRequest>('GET', `${this.at}/merge_requests/${number}`);
    } catch (err) {
      if (status(err) === 404) return null;
      throw err;
    }
    const headRepository = mr.source_project_id === mr.target_project_id ? `${this.owner}/${this.name}` : await this.projectPath(mr.source_project_id);
    return { open: mr.state === 'opened', merged: mr.state === 'merged', headRef: mr.source_branch, headRepository, url: mr.web_url };
  }

  /** A fork's path; null when GitLab no longer shows it. */
  private async projectPath(id: number): Promise<string | null> {
    try {
      return (await this.api.call<{ path_with_namespace: string }>('GET', `/projects/${id}`)).path_with_namespace;
    } catch (err) {
      if (status(err) === 404 || status(err) === 403) return null;
      throw err;
    }
  }

  /** GitLab's per-file diffs (`/diffs`, paginated), joined into one unified diff as git prints it. */
  async pullRequestDiff(number: number): Promise<string> {
    const files = await this.api.all<{ old_path: string; new_path: string; diff: string; new_file: boolean; deleted_file: boolean }>(`${this.at}/merge_requests/${number}/diffs`);
    return files
      .map((f) => {
        const from = f.new_file ? '/dev/null' : `a/${f.old_path}`;
        const to = f.deleted_file ? '/dev/null' : `b/${f.new_path}`;
        return `diff --git a/${f.old_path} b/${f.new_path}\n--- ${from}\n+++ ${to}\n${f.diff}`;
      })
      .join('');
  }

  private notesOf(number: number, on: 'pull' | 'issue' = 'pull') {
    return `${this.at}/${on === 'issue' ? 'issues' : 'merge_requests'}/${number}/notes`;
  }

  /** The notes people wrote, oldest first (GitLab's system notes, "added 1 commit", are not comments). */
  async comments(number: number, on?: 'pull' | 'issue') {
    const all = await this.api.all<{ id: number; body: string; system?: boolean }>(`${this.notesOf(number, on)}?sort=asc&order_by=created_at`);
    return all.filter((n) => !n.system).map((n) => ({ id: n.id, body: n.body ?? '' }));
  }

  async comment(number: number, body: string, on?: 'pull' | 'issue') {
    const made = await this.api.call<{ id: number }>('POST', this.notesOf(number, on), { body });
    return { id: made.id };
  }

  /** The award emoji `eyes`; GitLab refuses a second one of the same user (404 "has already been taken"), which is the first. */
  async react(target: ReactionTarget): Promise<void> {
    let path: string;
    if (target.kind === 'issue') path = `${this.at}/issues/${target.number}/award_emoji`;
    else if (target.kind === 'comment' && target.number !== undefined) path = `${this.notesOf(target.number, target.on)}/${target.id}/award_emoji`;
    else throw new Error('a GitLab note is reacted to through its merge request or issue: the target names none');
    try {
      await this.api.call('POST', path, { name: 'eyes' });
    } catch (err) {
      if ((status(err) === 404 || status(err) === 400) && /already been taken/i.test(message(err))) return;
      throw err;
    }
  }

  /**
   * The user's access level on the project, direct or inherited (GET /projects/:id/members/all/:user_id): Developer
   * (30) or more may push. A user GitLab does not know, or who is no member, has none.
   */
  async permission(login: string): Promise<RepositoryPermission> {
    const users = await this.api.call<Array<{ id: number; username: string }>>('GET', `/users?username=${encodeURIComponent(login)}`);
    const user = users.find((u) => u.username.toLowerCase() === login.toLowerCase());
    if (!user) return { push: false, role: 'none' };
    try {
      const member = await this.api.call<{ access_level: number }>('GET', `${this.at}/members/all/${user.id}`);
      return { push: member.access_level >= developerAccess, role: roleOf(member.access_level) };
    } catch (err) {
      if (status(err) === 404) return { push: false, role: 'none' };
      throw err;
    }
  }

  /** The commit status `docent`; GitLab refuses to set a status to the state it has (400), which a retry finds done. */
  async reportChecks(report: ChecksReport) {
    try {
      await this.api.call('POST', `${this.at}/statuses/${encodeURIComponent(report.commit)}`, {
        state: report.conclusion === 'success' ? 'success' : 'failed',
        name: statusName,
        description: report.headline.slice(0, 140),
      });
    } catch (err) {
      if (!(status(err) === 400 && /cannot transition status/i.test(message(err)))) throw err;
    }
    return 'commit-status' as const;
  }
}

/** The project's webhook as GitLab lists it. */
interface GitLabHook {
  id: number;
  url: string;
}

/** The events docent's webhook asks for. */
const hookEvents = { push_events: true, merge_requests_events: true, note_events: true, issues_events: true } as const;

/** A GitLab connection: its API at `{base}/api/v4`, a personal, group or project access token. */
export class GitLabForge implements Forge {
  readonly kind = 'gitlab' as const;
  readonly displayName = 'GitLab';
  readonly webhooks = gitlabWebhooks;
  /** GitLab takes any user name with a token as git's password; `oauth2` is the one its documentation gives. */
  readonly gitUser = 'oauth2';
  readonly pushRoles = 'Developer, Maintainer or Owner';
  private readonly api: GitLabApi;

  constructor(
    apiUrl: string,
    private readonly token: string | undefined,
  ) {
    this.api = new GitLabApi(apiUrl.replace(/\/+$/, ''), token);
  }

  /** GET /projects/:id: push when the token's own or its group's access level is Developer or more; null when GitLab will not show it. */
  async reach(owner: string, name: string) {
    try {
      const project = await this.api.call<{ permissions?: { project_access?: { access_level?: number } | null; group_access?: { access_level?: number } | null } }>(
        'GET',
        `/projects/${encodeURIComponent(`${owner}/${name}`)}`,
      );
      const level = Math.max(project.permissions?.project_access?.access_level ?? 0, project.permissions?.group_access?.access_level ?? 0);
      return { push: level >= developerAccess };
    } catch (err) {
      const s = status(err);
      if (s === 404 || s === 403 || s === 401) return null;
      throw err;
    }
  }

  async gitPassword(): Promise<string | undefined> {
    return this.token;
  }

  async repository(owner: string, name: string): Promise<ForgeRepository> {
    return new GitLabRepository(this.api, owner, name);
  }

  /**
   * docent's project hook, added once (found again by its URL, and then given the current secret as its token): false
   * where the token may not manage the project's hooks (GitLab answers 403 below Maintainer, 404 where it cannot see it).
   */
  async registerWebhook(owner: string, name: string, hook: WebhookRegistration): Promise<boolean> {
    const at = `/projects/${encodeURIComponent(`${owner}/${name}`)}/hooks`;
    const settings = { url: hook.url, token: hook.secret, ...hookEvents, enable_ssl_verification: hook.url.startsWith('https:') };
    try {
      const ours = (await this.api.all<GitLabHook>(at)).find((h) => h.url === hook.url);
      if (ours) await this.api.call('PUT', `${at}/${ours.id}`, settings);
      else await this.api.call('POST', at, settings);
      return true;
    } catch (err) {
      const s = status(err);
      if (s === 403 || s === 404 || s === 401) return false;
      throw err;
    }
  }
}

/** `GET {apiUrl}/user` with the token: the status GitLab answered (undefined: no answer). */
export async function gitlabTokenStatus(apiUrl: string, token: string): Promise<number | undefined> {
  try {
    await new GitLabApi(apiUrl.replace(/\/+$/, ''), token).call('GET', '/user');
    return 200;
  } catch (err) {
    return status(err);
  }
}
