// How git reaches a repository, the one place that decides it for the agent job's clone and push, the docs sync and
// the gap preview: where a project's repository is (its clone URL, owner and name), which credential git sends and
// where it may connect (each caller maps GitAccessRefused to its own failure), and the hardened client git runs as.
import { simpleGit, type SimpleGit } from 'simple-git';
import { AppError } from '../errors';
import { GitHubAppRefused } from '../github/github-errors';
import type { Forge } from '../forges/forge';
import { OutboundGuard, OutboundRefused } from '../net/outbound';

export interface ResolvedRepository {
  /** What git clones and pushes to; never carries credentials. */
  cloneUrl: string;
  /** GitHub owner and name, for the pull request API. */
  owner: string;
  name: string;
}

/** Turns a project's `repository` (owner/name on the configured GitHub, or a git URL) into clone URL and owner/name. */
export function resolveRepository(repository: string, gitBaseUrl: string): ResolvedRepository {
  const short = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(\.git)?$/.exec(repository);
  if (short) {
    const [, owner, name] = short;
    return { cloneUrl: `${gitBaseUrl.replace(/\/+$/, '')}/${owner}/${name}.git`, owner: owner!, name: name! };
  }
  let url: URL;
  try {
    url = new URL(repository);
  } catch {
    throw new AppError('invalid_argument', `repository "${repository}" is neither owner/name nor a git URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new AppError('invalid_argument', 'repository URL must use http or https');
  // Credentials belong in DOCENT_GITHUB_TOKEN, never in a stored URL.
  if (url.username || url.password) throw new AppError('invalid_argument', 'repository URL must not contain credentials');
  const parts = url.pathname
    .replace(/\.git$/, '')
    .split('/')
    .filter(Boolean);
  if (parts.length < 2) throw new AppError('invalid_argument', `repository URL "${repository}" has no owner/name path`);
  return { cloneUrl: url.toString(), owner: parts[parts.length - 2]!, name: parts[parts.length - 1]! };
}

const plainName = /^(?!\.{1,2}$)[A-Za-z0-9_.-]{1,100}$/;

/** `owner/name` of a repository whose two parts are plain names, so that they can name folders and a tool's argument. */
export function plainRepositoryName(repository: string, gitBaseUrl: string): string {
  const { owner, name } = resolveRepository(repository, gitBaseUrl);
  if (!plainName.test(owner) || !plainName.test(name)) {
    throw new AppError('invalid_argument', `repository "${repository}" must end in an owner/name path of letters, digits, ".", "_" and "-"`);
  }
  return `${owner}/${name}`;
}

/** How git reaches the job's repository: the token header only for the configured git host, pinned addresses elsewhere. */
export interface RemoteAccess {
  /** Extra `-c` settings for clone, fetch and push. */
  config: Record<string, string>;
}

/** What deciding git access needs: the configured git host, its credential, and the networks other hosts may use. */
export interface GitAccessSettings {
  /** Where `owner/name` repositories live (https://github.com or an Enterprise host); the only host that gets the token. */
  gitBaseUrl: string;
  /** Where the git host's credential comes from: the connection's forge (a token, or an App's installation token for the one repository). */
  forge?: Pick<Forge, 'gitPassword' | 'gitUser'>;
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
export async function remoteAccess(cloneUrl: string, opts: { gitBaseUrl: string; token?: string; user?: string; allowPrivateNetworks: string[] }): Promise<RemoteAccess> {
  const url = new URL(cloneUrl);
  const home = new URL(opts.gitBaseUrl);
  if (url.origin === home.origin) {
    if (!opts.token) return { config: {} };
    const basic = Buffer.from(`${opts.user ?? 'x-access-token'}:${opts.token}`).toString('base64');
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
  if (!settings.forge) return settings.token;
  if (new URL(repository.cloneUrl).origin !== new URL(settings.gitBaseUrl).origin) return undefined;
  try {
    return await settings.forge.gitPassword(repository.owner, repository.name, { readOnly });
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
    return { ...resolved, ...(await remoteAccess(resolved.cloneUrl, { ...settings, token, ...(settings.forge?.gitUser ? { user: settings.forge.gitUser } : {}) })) };
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
const author = { name: 'docent', email: 'docent-agent@users.noreply.github.com' };

// Every git call gets these, whatever the repository, the machine or the user's home says: repository content
// (hooks, fsmonitor, filters, submodules, other protocols) must never make git run a command on the worker.
const hardened: Record<string, string> = {
  'core.hooksPath': '/dev/null',
  'core.fsmonitor': 'false',
  'core.attributesFile': '/dev/null',
  'core.excludesFile': '/dev/null',
  'credential.helper': '',
  'protocol.allow': 'never',
  'protocol.https.allow': 'always',
  'protocol.http.allow': 'always',
  'submodule.recurse': 'false',
  'fetch.recurseSubmodules': 'false',
  'diff.ignoreSubmodules': 'all',
  'status.submoduleSummary': 'false',
  'filter.lfs.process': '',
  'filter.lfs.smudge': '',
  'filter.lfs.clean': '',
  'filter.lfs.required': 'false',
  // Clones here live for one job or one sync: git's housekeeping after each fetch (a process each time) gains nothing.
  'maintenance.auto': 'false',
  'gc.auto': '0',
  'user.name': author.name,
  'user.email': author.email,
};

/**
 * A git client for one folder that reads no system or global config and passes settings through GIT_CONFIG_*
 * variables (command scope: they win over the repository's own config and never touch argv or .git/config).
 */
export function hardenedGit(dir: string, ceiling: string, extra: Record<string, string> = {}, signal?: AbortSignal): SimpleGit {
  // The sandbox owns the worktree's files when the worker is root; git would otherwise refuse the clone as "dubious".
  const settings = { ...hardened, 'safe.directory': dir, ...extra };
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: '/nonexistent',
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_LFS_SKIP_SMUDGE: '1',
    // Never climb out of the workspace to find a repository (a clone missing its .git must not become another repo).
    GIT_CEILING_DIRECTORIES: ceiling,
    GIT_CONFIG_COUNT: String(Object.keys(settings).length),
  };
  for (const [i, [key, value]] of Object.entries(settings).entries()) Object.assign(env, { [`GIT_CONFIG_KEY_${i}`]: key, [`GIT_CONFIG_VALUE_${i}`]: value });
  return simpleGit({
    baseDir: dir,
    abort: signal,
    allowEnvironment: Object.keys(env).filter((k) => k.startsWith('GIT_')),
    // simple-git guards these keys because they can run programs; docent sets each of them to its inert value.
    unsafe: {
      allowUnsafeConfigEnvCount: true,
      allowUnsafeConfigPaths: true,
      allowUnsafeHooksPath: true,
      allowUnsafeFsMonitor: true,
      allowUnsafeCredentialHelper: true,
      allowUnsafeFilter: true,
      allowUnsafeProtocolOverride: true,
    },
  }).env(env);
}
