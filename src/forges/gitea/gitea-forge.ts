// The `gitea` kind behind the forge interface (src/forges/forge.ts): Gitea and Forgejo, API v1, with a token
// (`Authorization: token …`). Drafts are Gitea's work-in-progress title prefix (`WIP:`), checks are commit statuses,
// webhooks are signed with X-Gitea-Signature (the hex HMAC-SHA256 of the body) and docent registers its own.
import type { IncomingHttpHeaders } from 'node:http';
import { signatureMatches } from '../../github/webhook-secrets';
import { forgeRequest, forgeStatus } from '../forge-http';
import type { ChecksReport, Forge, ForgeRepository, ForgeWebhooks, NewPullRequest, PullRequestRef, ReactionTarget, RepositoryPermission, WebhookRegistration } from '../forge';

/** Gitea's largest page (its default MAX_RESPONSE_ITEMS). */
const pageSize = 50;
/** Access levels that may push (Gitea's AccessMode names). */
const writers: ReadonlySet<string> = new Set(['write', 'admin', 'owner']);
/** The events docent's webhook asks for: `issues` brings issue comments, `pull_request` the pull requests' comments. */
const hookEvents = ['push', 'issues', 'pull_request'];
/** The title prefix Gitea reads as a draft (its default WORK_IN_PROGRESS_PREFIXES). */
const draftPrefix = 'WIP: ';

const header = (headers: IncomingHttpHeaders, name: string) => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * Gitea's payloads read as docent reads GitHub's (src/github/payloads.ts): the fields are named alike; a comment has
 * no `author_association` (docent asks the forge who may push instead, so it is set to NONE).
 */
function normalize(event: string, payload: unknown): { event: string; payload: unknown } {
  if (event !== 'issue_comment' || typeof payload !== 'object' || payload === null) return { event, payload };
  const p = payload as { comment?: Record<string, unknown> };
  return { event, payload: p.comment && typeof p.comment === 'object' ? { ...p, comment: { author_association: 'NONE', ...p.comment } } : payload };
}

/** Gitea's webhooks: X-Gitea-Signature (hex HMAC-SHA256 of the raw body), X-Gitea-Delivery and X-Gitea-Event. */
export const giteaWebhooks: ForgeWebhooks = {
  signatureHeader: 'X-Gitea-Signature',
  async verify(secret, body, headers) {
    const signature = header(headers, 'x-gitea-signature');
    // The same digest GitHub sends after `sha256=`: verified by the same library, never by hand.
    return signature !== undefined && /^[0-9a-f]{64}$/i.test(signature) && (await signatureMatches(secret, body, `sha256=${signature.toLowerCase()}`));
  },
  read: (headers) => ({ id: header(headers, 'x-gitea-delivery'), event: header(headers, 'x-gitea-event') }),
  normalize,
};

/** One token's calls to one Gitea server's API. */
export class GiteaApi {
  constructor(
    private readonly apiUrl: string,
    private readonly token: string | undefined,
  ) {}

  async call<T>(method: string, path: string, body?: unknown, accept = 'application/json'): Promise<T> {
    const auth: Record<string, string> = this.token ? { authorization: `token ${this.token}` } : {};
    return (await forgeRequest<T>({ forge: 'Gitea', apiUrl: this.apiUrl, auth, method, path, body, accept })).data;
  }

  /** Every page of a list (`page`, `limit`), up to `max` items. */
  async all<T>(path: string, max = 1000): Promise<T[]> {
    const out: T[] = [];
    for (let page = 1; out.length < max; page++) {
      const items = await this.call<T[]>('GET', `${path}${path.includes('?') ? '&' : '?'}limit=${pageSize}&page=${page}`);
      out.push(...items);
      if (items.length < pageSize) break;
    }
    return out;
  }
}

const status = forgeStatus;
const seg = encodeURIComponent;

interface GiteaPull {
  number: number;
  html_url: string;
  state: string;
  merged: boolean;
  head: { ref: string; repo?: { full_name: string } | null };
}

class GiteaRepository implements ForgeRepository {
  private readonly at: string;

  constructor(
    private readonly api: GiteaApi,
    readonly owner: string,
    readonly name: string,
  ) {
    this.at = `/repos/${seg(owner)}/${seg(name)}`;
  }

  async openPullRequestOf(branch: string): Promise<PullRequestRef | null> {
    const pulls = await this.api.all<GiteaPull>(`${this.at}/pulls?state=open`);
    const own = `${this.owner}/${this.name}`.toLowerCase();
    const pr = pulls.find((p) => p.head.ref === branch && p.head.repo?.full_name.toLowerCase() === own);
    return pr ? { url: pr.html_url, number: pr.number } : null;
  }

  /** A draft is titled `WIP: …`, which Gitea shows as a draft and will not merge until the prefix goes. */
  async openPullRequest(pr: NewPullRequest): Promise<PullRequestRef> {
    const existing = await this.openPullRequestOf(pr.head);
    if (existing) return existing;
    try {
      const made = await this.api.call<GiteaPull>('POST', `${this.at}/pulls`, { head: pr.head, base: pr.base, title: pr.draft ? `${draftPrefix}${pr.title}` : pr.title, body: pr.body(pr.draft) });
      return { url: made.html_url, number: made.number };
    } catch (err) {
      // 409: a pull request for this head and base exists already (two attempts raced).
      if (status(err) === 409) {
        const raced = await this.openPullRequestOf(pr.head).catch(() => null);
        if (raced) return raced;
      }
      throw err;
    }
  }

  async pullRequest(number: number) {
    try {
      const p = await this.api.call<GiteaPull>('GET', `${this.at}/pulls/${number}`);
      return { open: p.state === 'open', merged: p.merged === true, headRef: p.head.ref, headRepository: p.head.repo?.full_name ?? null, url: p.html_url };
    } catch (err) {
      if (status(err) === 404) return null;
      throw err;
    }
  }

  pullRequestDiff(number: number): Promise<string> {
    return this.api.call<string>('GET', `${this.at}/pulls/${number}.diff`, undefined, 'text/plain');
  }

  async comments(number: number) {
    const all = await this.api.call<Array<{ id: number; body: string }>>('GET', `${this.at}/issues/${number}/comments`);
    return all.map((c) => ({ id: c.id, body: c.body ?? '' }));
  }

  async comment(number: number, body: string) {
    const made = await this.api.call<{ id: number }>('POST', `${this.at}/issues/${number}/comments`, { body });
    return { id: made.id };
  }

  /** Gitea keeps one reaction of a kind per user: a second is answered as the first. */
  async react(target: ReactionTarget): Promise<void> {
    const path = target.kind === 'issue' ? `${this.at}/issues/${target.number}/reactions` : `${this.at}/issues/comments/${target.id}/reactions`;
    await this.api.call('POST', path, { content: 'eyes' });
  }

  /** GET /repos/{owner}/{repo}/collaborators/{user}/permission: write, admin and owner may push; 404 is no such user. */
  async permission(login: string): Promise<RepositoryPermission> {
    try {
      const p = await this.api.call<{ permission: string; role_name?: string }>('GET', `${this.at}/collaborators/${seg(login)}/permission`);
      return { push: writers.has(p.permission), role: p.role_name || p.permission };
    } catch (err) {
      if (status(err) === 404) return { push: false, role: 'none' };
      throw err;
    }
  }

  /** The commit status `docent` (Gitea keeps the latest per context, so a retry replaces it). */
  async reportChecks(report: ChecksReport) {
    await this.api.call('POST', `${this.at}/statuses/${seg(report.commit)}`, { state: report.conclusion, context: 'docent', description: report.headline.slice(0, 140) });
    return 'commit-status' as const;
  }
}

/** A Gitea (or Forgejo) connection: its API at `{base}/api/v1`, a token. */
export class GiteaForge implements Forge {
  readonly kind = 'gitea' as const;
  readonly displayName = 'Gitea';
  readonly pushRoles = 'write, admin or owner';
  readonly webhooks = giteaWebhooks;
  private readonly api: GiteaApi;

  constructor(
    apiUrl: string,
    private readonly token: string | undefined,
  ) {
    this.api = new GiteaApi(apiUrl.replace(/\/+$/, ''), token);
  }

  async reach(owner: string, name: string) {
    try {
      const repo = await this.api.call<{ permissions?: { push?: boolean } }>('GET', `/repos/${seg(owner)}/${seg(name)}`);
      return { push: repo.permissions?.push === true };
    } catch (err) {
      const s = status(err);
      if (s === 404 || s === 403 || s === 401) return null;
      throw err;
    }
  }

  /** Gitea takes the token as git's password (any user name); it mints no narrower one. */
  async gitPassword(): Promise<string | undefined> {
    return this.token;
  }

  async repository(owner: string, name: string): Promise<ForgeRepository> {
    return new GiteaRepository(this.api, owner, name);
  }

  /**
   * docent's webhook on the repository, added once (found again by its URL, and then given the current secret): false
   * where the token may not manage the repository's webhooks (Gitea answers 403 or 404 to one without admin on it).
   */
  async registerWebhook(owner: string, name: string, hook: WebhookRegistration): Promise<boolean> {
    const at = `/repos/${seg(owner)}/${seg(name)}/hooks`;
    const config = { url: hook.url, content_type: 'json', secret: hook.secret };
    try {
      const hooks = await this.api.all<{ id: number; config?: { url?: string } }>(at);
      const ours = hooks.find((h) => h.config?.url === hook.url);
      if (ours) await this.api.call('PATCH', `${at}/${ours.id}`, { config, events: hookEvents, active: true });
      else await this.api.call('POST', at, { type: 'gitea', config, events: hookEvents, active: true, branch_filter: '*' });
      return true;
    } catch (err) {
      const s = status(err);
      if (s === 403 || s === 404 || s === 401) return false;
      throw err;
    }
  }
}

/** `GET {apiUrl}/user` with the token: the status Gitea answered (undefined: no answer). */
export async function giteaTokenStatus(apiUrl: string, token: string): Promise<number | undefined> {
  try {
    await new GiteaApi(apiUrl.replace(/\/+$/, ''), token).call('GET', '/user');
    return 200;
  } catch (err) {
    return status(err);
  }
}
