// How git reaches a repository: which credential it sends and where it may connect. The one place that decides it for
// the agent job's clone and push, the docs sync and the gap preview; each maps GitAccessRefused to its own failure.
import { GitHubAppRefused, type GitHubCredentials } from '../github/credentials';
import { OutboundGuard, OutboundRefused } from '../net/outbound';
import { resolveRepository, type ResolvedRepository } from './repository';

/** How git reaches the job's repository: the token header only for the configured git host, pinned addresses elsewhere. */
export interface RemoteAccess {
  /** Extra `-c` settings for clone, fetch and push. */
  config: Record<string, string>;
}

/** What deciding git access needs: the configured git host, its credential, and the networks other hosts may use. */
export interface GitAccessSettings {
  /** Where `owner/name` repositories live (https://github.com or an Enterprise host); the only host that gets the token. */
  gitBaseUrl: string;
  /** Where the git host's credential comes from (a token, or the App's installation token for the one repository). */
  credentials?: GitHubCredentials;
  /** The token itself, for callers without credentials (tests of a single step). */
  token?: string;
  /** CIDRs a repository on another host may resolve to although private or loopback (DOCENT_ALLOW_PRIVATE_NETWORKS). */
  allowPrivateNetworks: string[];
}

/** A repository git may not reach: its URL leads where docent does not connect, or the git host gives no credential for it. */
export class GitAccessRefused extends Error {
  override name = 'GitAccessRefused';
  constructor(
    readonly reason: 'address' | 'credential',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A repository as git reaches it: where it is cloned from, its owner and name, and the settings for the remote. */
export interface RepositoryAccess extends ResolvedRepository, RemoteAccess {}

/**
 * Decides how git may reach cloneUrl. The configured git host gets the token, scoped to that host by
 * `http.<url>.extraHeader`; any other host gets no token, must not be private, loopback or link-local (unless
 * allowed), must use https (unless allowed), and is pinned to the addresses checked here.
 */
export async function remoteAccess(cloneUrl: string, opts: { gitBaseUrl: string; token?: string; allowPrivateNetworks: string[] }): Promise<RemoteAccess> {
  const url = new URL(cloneUrl);
  const home = new URL(opts.gitBaseUrl);
  if (url.origin === home.origin) {
    if (!opts.token) return { config: {} };
    const basic = Buffer.from(`x-access-token:${opts.token}`).toString('base64');
    return { config: { [`http.${home.origin}/.extraHeader`]: `Authorization: Basic ${basic}` } };
  }
  const addresses = await new OutboundGuard(opts.allowPrivateNetworks).check(url);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const pinned = addresses.map((a) => (a.includes(':') ? `[${a}]` : a)).join(',');
  // A redirect could lead to an address nobody checked.
  return { config: { 'http.curloptResolve': `${url.hostname}:${port}:${pinned}`, 'http.followRedirects': 'false' } };
}

/** The password git sends to the configured git host for the repository; none for a repository on any other host. */
async function hostToken(repository: ResolvedRepository, settings: GitAccessSettings, readOnly: boolean): Promise<string | undefined> {
  if (!settings.credentials) return settings.token;
  if (new URL(repository.cloneUrl).origin !== new URL(settings.gitBaseUrl).origin) return undefined;
  const { credentials } = settings;
  try {
    return readOnly ? await credentials.readOnlyGitToken(repository.owner, repository.name) : (await credentials.access(repository.owner, repository.name)).gitToken;
  } catch (err) {
    if (err instanceof GitHubAppRefused) throw new GitAccessRefused('credential', err.message, { cause: err });
    throw err;
  }
}

/**
 * How git reaches `repository` (`owner/name` or a git URL), decided anew for each step: the credential is cached in
 * memory, never in git config; `readOnly` asks an App for a token that can only read. Throws AppError for a name that is no repository, GitAccessRefused for one git may not reach.
 */
export async function repositoryAccess(repository: string, settings: GitAccessSettings, opts: { readOnly?: boolean } = {}): Promise<RepositoryAccess> {
  const resolved = resolveRepository(repository, settings.gitBaseUrl);
  const token = await hostToken(resolved, settings, opts.readOnly === true);
  try {
    return { ...resolved, ...(await remoteAccess(resolved.cloneUrl, { ...settings, token })) };
  } catch (err) {
    if (err instanceof OutboundRefused) throw new GitAccessRefused('address', err.message, { cause: err });
    throw err;
  }
}

/** What git's failure says about the remote: the repository is missing (or hidden from the credential), or the credential was refused. */
export function remoteRefusal(err: unknown): 'missing' | 'denied' | undefined {
  const text = err instanceof Error ? err.message : String(err);
  if (/not found|does not appear to be a git repository/i.test(text)) return 'missing';
  if (/Authentication failed|could not read Username|403|401/i.test(text)) return 'denied';
  return undefined;
}

/** The last line of git's failure, short enough for a job's error; the token is never in it (it travels in GIT_CONFIG_* only). */
export function gitFailureLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.trim().split('\n').pop()?.slice(0, 200) ?? '';
}
