import type { createAppAuth } from '@octokit/auth-app';
import type { Octokit } from '@octokit/rest';
import type { GitHubSettings } from '../config';
import type { Logger } from '../log';
import { GitHubAppNotInstalled, GitHubAppRefused, statusOf } from './github-errors';
import { requestTurns } from './request-turns';

// The errors live apart so that any module may read them, while only src/forges/ builds credentials (.dependency-cruiser.cjs).
export { GitHubAppNotInstalled, GitHubAppRefused, statusOf } from './github-errors';

/**
 * How docent reaches one repository on GitHub: the only place that holds GitHub credentials.
 *
 * - Token mode (DOCENT_GITHUB_TOKEN): every repository gets that token.
 * - App mode (DOCENT_GITHUB_APP_ID and its private key): every repository gets an installation token requested for
 *   that one repository with only the permissions below, kept in this process's memory until shortly before it
 *   expires. Never store, log or hand one to a sandbox: ask for access again instead (it is cached).
 */
export interface GitHubAccess {
  /** REST client for this repository's API calls; GitHub's rate limits are waited out (see `RetryWindow`). */
  octokit: Octokit;
  /** The password git sends as `x-access-token` to the configured git host (src/git/access.ts); undefined means none is configured. */
  gitToken?: string;
  mode: 'app' | 'token';
}

/** The permissions an installation token is asked for: push, pull requests, check runs, comments. Nothing else. */
export const installationPermissions = { contents: 'write', pull_requests: 'write', checks: 'write', issues: 'write' } as const;
/** What a token that only reads a repository asks for (a job's context repositories). */
export const readOnlyPermissions = { contents: 'read' } as const;
type Permissions = typeof installationPermissions | typeof readOnlyPermissions;

/** When a call GitHub rate-limited may still be retried: by this epoch millisecond (an activity's deadline), else not at all. */
export type RetryWindow = () => number;

/** A token is used for at most one activity (minutes); one with less left than this is replaced before it is handed out. */
const renewBeforeMs = 10 * 60_000;
const maxRateLimitRetries = 3;

/**
 * Octokit with the throttling plugin, whose process-wide queues are taken by project in turn (src/github/request-turns.ts).
 * Loaded on the first client: every `docent` command builds credentials, and few of them call GitHub.
 */
const octokitLibrary = memo(() => {
  const { Octokit } = require('@octokit/rest') as typeof import('@octokit/rest');
  const { throttling } = require('@octokit/plugin-throttling') as typeof import('@octokit/plugin-throttling');
  const { createAppAuth } = require('@octokit/auth-app') as typeof import('@octokit/auth-app');
  return { RateLimited: Octokit.plugin(throttling, requestTurns(throttling.triggersNotification)), createAppAuth };
});
type Throttled = InstanceType<ReturnType<typeof octokitLibrary>['RateLimited']>;

function memo<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

interface CachedToken {
  token: string;
  expiresAt: number;
}

/**
 * One connection's way to GitHub: the deployment's settings, or an organization's connection (src/forges/): a token,
 * or the deployment's App pinned to the one installation that organization claimed.
 */
export type GitHubConnectionSettings = Pick<GitHubSettings, 'apiUrl' | 'gitUrl' | 'token' | 'app'> & {
  /** Only this installation of the App may serve: a repository of any other installation is refused as not installed. */
  installationId?: number;
};

export class GitHubCredentials {
  readonly mode: 'app' | 'token';
  private readonly app?: Throttled;
  private readonly auth?: ReturnType<typeof createAppAuth>;
  private readonly installations = new Map<string, number>();
  private readonly tokens = new Map<string, CachedToken>();
  private readonly minting = new Map<string, Promise<string>>();
  private installUrl?: string;

  constructor(
    private readonly settings: GitHubConnectionSettings,
    private readonly log?: Logger,
  ) {
    this.mode = settings.app ? 'app' : 'token';
    if (settings.app) {
      const auth = { appId: settings.app.id, privateKey: settings.app.privateKey.reveal() };
      const { createAppAuth } = octokitLibrary();
      this.auth = createAppAuth({ ...auth, request: this.client().request });
      // Signs /app/* and /repos/{o}/{r}/installation with the App's JWT.
      this.app = this.client(undefined, { authStrategy: createAppAuth, auth });
    }
  }

  /** API client and git password for `owner/name`; in App mode an installation token for that repository alone. */
  async access(owner: string, name: string, retryWindow?: RetryWindow): Promise<GitHubAccess> {
    if (this.mode === 'token') return { octokit: this.client(retryWindow, { auth: this.settings.token }), gitToken: this.settings.token, mode: 'token' };
    const token = await this.installationToken(owner, name);
    return { octokit: this.client(retryWindow, { authStrategy: this.installationAuth(owner, name) }), gitToken: token, mode: 'app' };
  }

  /**
   * What this connection may do on `owner/name`, as GitHub answers `GET /repos/{owner}/{repo}` to its credential: null
   * when GitHub will not show it the repository (404 to a token that cannot see a private one); where to install the
   * App when it is not installed there.
   */
  async reach(owner: string, name: string): Promise<{ push: boolean } | { installUrl: string } | null> {
    try {
      // An App installed on the repository reaches it with what the App was granted (it asks for contents write): no token minted.
      if (this.mode === 'app') return (await this.installation(owner, name, true)) ? { push: true } : null;
      const { octokit } = await this.access(owner, name);
      const { data } = await octokit.rest.repos.get({ owner, repo: name });
      return { push: data.permissions?.push === true };
    } catch (err) {
      if (err instanceof GitHubAppNotInstalled) return { installUrl: err.installUrl };
      const status = statusOf(err);
      if (status === 404 || status === 403 || status === 401) return null;
      throw err;
    }
  }

  /** A git password that only reads `owner/name`: in App mode an installation token for it with contents read alone; else the token. */
  async readOnlyGitToken(owner: string, name: string): Promise<string | undefined> {
    if (this.mode === 'token') return this.settings.token;
    return this.installationToken(owner, name, readOnlyPermissions);
  }

  /**
   * Octokit's auth for `owner/name`: each request takes the cached installation token, and one GitHub refuses (401:
   * revoked by an uninstall, or expired) is dropped and replaced once, looking the installation up again if need be.
   */
  private installationAuth(owner: string, name: string) {
    const key = `${owner}/${name}`.toLowerCase();
    const token = () => this.installationToken(owner, name);
    const forget = () => this.tokens.delete(key);
    type Request = ((options: object) => Promise<unknown>) & { endpoint: { merge(route: unknown, parameters?: unknown): { headers: Record<string, string> } } };
    return () =>
      Object.assign(async () => ({ type: 'token', tokenType: 'installation', token: await token() }), {
        hook: async (request: Request, route: unknown, parameters?: unknown) => {
          const endpoint = request.endpoint.merge(route, parameters);
          const send = async () => {
            endpoint.headers.authorization = `token ${await token()}`;
            return request(endpoint);
          };
          try {
            return await send();
          } catch (err) {
            if (statusOf(err) !== 401) throw err;
            forget();
            return send();
          }
        },
      });
  }

  /**
   * The App's installation on `owner/name` (GET /repos/{owner}/{repo}/installation), looked up once per process and
   * again when a token request fails. Throws GitHubAppNotInstalled, naming the install URL, when there is none.
   */
  async installation(owner: string, name: string, fresh = false): Promise<number> {
    const key = `${owner}/${name}`.toLowerCase();
    const known = this.installations.get(key);
    if (known !== undefined && !fresh) return known;
    try {
      const { data } = await this.app!.rest.apps.getRepoInstallation({ owner, repo: name });
      // Another organization's installation of the same App: to this connection the repository is not installed.
      if (this.settings.installationId !== undefined && data.id !== this.settings.installationId) throw new GitHubAppNotInstalled(`${owner}/${name}`, await this.appInstallUrl());
      this.installations.set(key, data.id);
      return data.id;
    } catch (err) {
      // A JWT GitHub cannot verify: the wrong App id or key (or a clock far off); no retry fixes that.
      if (statusOf(err) === 401) throw new GitHubAppRefused("GitHub refused the App's JWT: check DOCENT_GITHUB_APP_ID, its private key and this machine's clock");
      if (statusOf(err) !== 404) throw err;
      this.installations.delete(key);
      throw new GitHubAppNotInstalled(`${owner}/${name}`, await this.appInstallUrl());
    }
  }

  private async installationToken(owner: string, name: string, permissions: Permissions = installationPermissions): Promise<string> {
    const key = `${owner}/${name}`.toLowerCase() + (permissions === readOnlyPermissions ? ' read-only' : '');
    const cached = this.tokens.get(key);
    if (cached && cached.expiresAt - Date.now() > renewBeforeMs) return cached.token;
    // Steps of several jobs on one repository starting together share one request.
    let minting = this.minting.get(key);
    if (!minting) {
      minting = this.newToken(owner, name, key, permissions).finally(() => this.minting.delete(key));
      this.minting.set(key, minting);
    }
    return minting;
  }

  private async newToken(owner: string, name: string, key: string, permissions: Permissions): Promise<string> {
    let installationId = await this.installation(owner, name);
    let minted: Awaited<ReturnType<typeof this.mint>>;
    try {
      minted = await this.mint(installationId, name, permissions);
    } catch (err) {
      // Uninstalled and installed again, or the repository moved: the old installation id is gone.
      if (statusOf(err) !== 404 && statusOf(err) !== 422) throw err;
      installationId = await this.installation(owner, name, true);
      minted = await this.mint(installationId, name, permissions);
    }
    this.tokens.set(key, { token: minted.token, expiresAt: Date.parse(minted.expiresAt) });
    return minted.token;
  }

  private async mint(installationId: number, name: string, permissions: Permissions) {
    // refresh: this module keeps its own cache, which honours the token's real expiry.
    return this.auth!({ type: 'installation', installationId, repositoryNames: [name], permissions: { ...permissions }, refresh: true });
  }

  private async appInstallUrl(): Promise<string> {
    if (!this.installUrl) {
      const { data } = await this.app!.rest.apps.getAuthenticated();
      this.installUrl = `${data?.html_url ?? `${new URL(this.settings.gitUrl).origin}/apps/${data?.slug}`}/installations/new`;
    }
    return this.installUrl;
  }

  private client(retryWindow?: RetryWindow, extra: Record<string, unknown> = {}): Throttled {
    const retry = (what: string) => (retryAfter: number, options: { method: string; url: string }, _octokit: unknown, retryCount: number) => {
      const allowed = retryCount < maxRateLimitRetries && retryWindow !== undefined && Date.now() + retryAfter * 1000 < retryWindow();
      this.log?.warn({ method: options.method, url: options.url, retryAfterSeconds: retryAfter, retrying: allowed }, `GitHub ${what}`);
      return allowed;
    };
    return new (octokitLibrary().RateLimited)({
      baseUrl: this.settings.apiUrl,
      userAgent: 'docent',
      // Temporal retries an activity; the client itself retries only what GitHub asked to be retried later.
      request: { retries: 0 },
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
      throttle: { onSecondaryRateLimit: retry('secondary rate limit'), onRateLimit: retry('rate limit') },
      ...extra,
    });
  }
}
