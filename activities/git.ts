import { mkdir, rm, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { simpleGit, type SimpleGit } from 'simple-git';
import { resolveRepository } from '../src/agent/repository';
import type { AgentErrorType, CommitAndPushInput, CommitAndPushResult, FileChange, PrepareWorkspaceInput, PrepareWorkspaceResult } from '../workflows/contracts';

export interface GitDeps {
  /** Where `owner/name` repositories live (https://github.com or an Enterprise host). */
  gitBaseUrl: string;
  token?: string;
  workspaceDir: string;
}

const author = { name: 'docent', email: 'docent-agent@users.noreply.github.com' };

/** The job's working copy; one per job, so concurrent jobs never share a tree. */
export const workspacePath = (deps: GitDeps, jobId: string) => path.join(deps.workspaceDir, jobId);

function fail(type: AgentErrorType | 'GitFailed', message: string): never {
  throw ApplicationFailure.create({ type, message, nonRetryable: type !== 'GitFailed' });
}

/** Maps git's stderr to a failure a person can act on; the token is never part of it (it is not in any URL). */
function classifyGitError(err: unknown, what: string): never {
  const text = err instanceof Error ? err.message : String(err);
  if (/not found|does not appear to be a git repository|Repository not found/i.test(text)) fail('RepositoryNotFound', `${what}: the repository does not exist or the token cannot see it`);
  if (/Authentication failed|could not read Username|403|401/i.test(text)) fail('RepositoryAccessDenied', `${what}: the git server refused the configured token`);
  const lastLine = text.trim().split('\n').pop()?.slice(0, 200) ?? '';
  fail('GitFailed', `${what} failed: ${lastLine}`);
}

/** A git client whose credentials live only in this process's environment: never in .git/config, URLs or logs. */
export function gitIn(deps: GitDeps, dir: string): SimpleGit {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', GIT_TERMINAL_PROMPT: '0', LANG: 'C' };
  if (deps.token) {
    const basic = Buffer.from(`x-access-token:${deps.token}`).toString('base64');
    Object.assign(env, { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` });
  }
  // GIT_CONFIG_* in the environment is how the token reaches git without touching argv or .git/config.
  return simpleGit({
    baseDir: dir,
    config: [`user.name=${author.name}`, `user.email=${author.email}`],
    allowEnvironment: Object.keys(env).filter((k) => k.startsWith('GIT_')),
    unsafe: { allowUnsafeConfigEnvCount: true },
  }).env(env);
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

/** Clones once per job and fetches afterwards; a broken clone (killed mid-way) is replaced. */
async function ensureClone(deps: GitDeps, jobId: string, cloneUrl: string): Promise<SimpleGit> {
  const dir = workspacePath(deps, jobId);
  if (await exists(path.join(dir, '.git', 'HEAD'))) {
    const git = gitIn(deps, dir);
    try {
      await git.fetch(['origin', '--prune', '--force']);
      return git;
    } catch {
      await rm(dir, { recursive: true, force: true });
    }
  }
  await rm(dir, { recursive: true, force: true });
  await mkdir(deps.workspaceDir, { recursive: true });
  try {
    await gitIn(deps, deps.workspaceDir).clone(cloneUrl, dir, ['--no-checkout']);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    classifyGitError(err, 'cloning the repository');
  }
  return gitIn(deps, dir);
}

/** Puts the working tree exactly at `commit`, whatever an earlier attempt left there. */
export async function checkoutClean(deps: GitDeps, jobId: string, repository: string, commit: string): Promise<SimpleGit> {
  const { cloneUrl } = resolveRepository(repository, deps.gitBaseUrl);
  const git = await ensureClone(deps, jobId, cloneUrl);
  await git.raw(['checkout', '--force', '--detach', commit]);
  await git.raw(['reset', '--hard', commit]);
  await git.raw(['clean', '-fdx']);
  return git;
}

async function revParse(git: SimpleGit, ref: string): Promise<string | null> {
  try {
    return (await git.raw(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).trim() || null;
  } catch {
    return null;
  }
}

export function createGitActivities(deps: GitDeps) {
  return {
    /** Clones (or refreshes) the job's workspace and says where the agent starts: the job branch if pushed before, else the base ref. */
    async prepareWorkspace(input: PrepareWorkspaceInput): Promise<PrepareWorkspaceResult> {
      const { cloneUrl } = resolveRepository(input.repository, deps.gitBaseUrl);
      Context.current().heartbeat('cloning');
      const git = await ensureClone(deps, input.jobId, cloneUrl);
      const startCommit = (await revParse(git, `refs/remotes/origin/${input.branch}`)) ?? (await revParse(git, `refs/remotes/origin/${input.baseRef}`)) ?? (await revParse(git, input.baseRef));
      if (!startCommit) fail('RefNotFound', `the base ref "${input.baseRef}" does not exist in the repository`);
      return { startCommit };
    },

    /** Deletes the job's working copy on this worker once the job has no instruction left; a missing copy is fine. */
    async removeWorkspace(input: { jobId: string }): Promise<void> {
      await rm(workspacePath(deps, input.jobId), { recursive: true, force: true });
    },

    /** Commits the agent's changes on top of startCommit and pushes the job branch; a retry after a successful push pushes nothing new. */
    async commitAndPush(input: CommitAndPushInput): Promise<CommitAndPushResult> {
      const git = await checkoutClean(deps, input.jobId, input.repository, input.startCommit);
      const marker = `Docent-Turn: ${input.jobId}/${input.turn}`;
      const remoteHead = await revParse(git, `refs/remotes/origin/${input.branch}`);
      if (remoteHead && remoteHead !== input.startCommit) {
        const [parent, message] = [await revParse(git, `${remoteHead}^`), await git.raw(['log', '-1', '--format=%B', remoteHead])];
        if (parent === input.startCommit && message.includes(marker)) return { commit: remoteHead };
      }
      const root = workspacePath(deps, input.jobId);
      await applyChanges(root, input.changes);
      await git.raw(['add', '--all']);
      const staged = (await git.raw(['diff', '--cached', '--name-only'])).trim();
      if (!staged) return { commit: null };
      await git.raw(['commit', '--quiet', '-m', input.title, '-m', `Docent-Job: ${input.jobId}\n${marker}`]);
      const commit = (await git.raw(['rev-parse', 'HEAD'])).trim();
      Context.current().heartbeat('pushing');
      try {
        await git.raw(['push', 'origin', `HEAD:refs/heads/${input.branch}`]);
      } catch (err) {
        classifyGitError(err, 'pushing the job branch');
      }
      return { commit };
    },
  };
}

/** Writes and deletes files as the agent decided; paths were checked against the workspace when the agent made them. */
export async function applyChanges(root: string, changes: FileChange[]): Promise<void> {
  for (const change of changes) {
    const file = path.join(root, change.path);
    if (!file.startsWith(root + path.sep)) fail('AgentLimitExceeded', `refusing a change outside the repository: ${change.path}`);
    if (change.content === null) await unlink(file).catch(() => undefined);
    else {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, change.content);
    }
  }
}
