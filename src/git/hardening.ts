import { simpleGit, type SimpleGit } from 'simple-git';

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
