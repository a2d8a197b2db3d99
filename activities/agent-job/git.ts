import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { SimpleGit } from 'simple-git';
import { GitAccessRefused, gitFailureLine, remoteRefusal, repositoryAccess, type GitAccessSettings, type RepositoryAccess, hardenedGit } from '../../src/git/access';
import type { ForgeRegistry } from '../../src/forges/forge-registry';
import { CloneFs, PathRefused, type FileOwner } from './clone-fs';
import type { TurnJournal } from './turn-journal';
import { branchBase, turnDiff } from './turn-diff';
import { markOwner, OWNER_SUFFIX, type WorkspaceOwner } from './workspace-owner';
import type { FileStat } from '../../src/jobs/job-turns';
import {
  PLAIN_JOB_ID,
  type AgentErrorType,
  type CommitAndPushInput,
  type CommitAndPushResult,
  type FileChange,
  type PrepareWorkspaceInput,
  type PrepareWorkspaceResult,
} from '../../workflows/agent-job-contract';

/** A repository and the forge connection it resolved through (absent: the deployment's). */
export interface RepositoryRef {
  repository: string;
  forgeId?: string;
}

export interface GitDeps extends GitAccessSettings {
  /** The forge connections whose credentials reach each repository (src/forges/); without it, the deployment's only. */
  forges?: ForgeRegistry;
  workspaceDir: string;
  /** Marks each job's folders as this deployment's and this worker's, so only its own deployment's sweep removes them. */
  workspaceOwner?: WorkspaceOwner;
  /** This worker's own task queue (activities/agent-job/workspace-queue.ts), returned by prepareWorkspace so the turn stays here. */
  workspaceQueue?: string;
}

/**
 * The folder `<jobId><suffix>` directly inside the workspace folder. Workflow input is not trusted (anyone who can
 * reach Temporal can start a workflow by hand), so a job id that would name anything else fails the activity for good.
 */
export function jobFolder(workspaceDir: string, jobId: unknown, suffix = ''): string {
  const root = path.resolve(workspaceDir);
  const dir = typeof jobId === 'string' && PLAIN_JOB_ID.test(jobId) ? path.resolve(root, jobId + suffix) : undefined;
  if (!dir || path.dirname(dir) !== root) {
    throw ApplicationFailure.create({ type: 'InvalidJobId', message: 'the job id is not a plain name; refusing to touch the workspace folder', nonRetryable: true });
  }
  return dir;
}

/** The job's working copy; one per job, so concurrent jobs never share a tree. */
export const workspacePath = (deps: GitDeps, jobId: string) => jobFolder(deps.workspaceDir, jobId);

/** The job's read-only context repositories, `<owner>/<name>` each: beside the clone, never inside it, so nothing there is committed. */
export const contextFolder = (workspaceDir: string, jobId: string) => jobFolder(workspaceDir, jobId, '.context');

/** HOME of a job's sandboxed commands: beside the clone, never inside it, so nothing there is ever committed. */
export const sandboxHomePath = (workspaceDir: string, jobId: string) => jobFolder(workspaceDir, jobId, '.home');

/** Who made the job's folders (activities/agent-job/workspace-owner.ts): beside them, out of the sandbox's sight. */
export const ownerMarkerPath = (workspaceDir: string, jobId: string) => jobFolder(workspaceDir, jobId, OWNER_SUFFIX);

function fail(type: AgentErrorType | 'GitFailed', message: string): never {
  throw ApplicationFailure.create({ type, message, nonRetryable: type !== 'GitFailed' });
}

/** Maps git's stderr to a failure a person can act on; the token is never part of it (it is not in any URL). */
export function classifyGitError(err: unknown, what: string): never {
  const refusal = remoteRefusal(err);
  if (refusal === 'missing') fail('RepositoryNotFound', `${what}: the repository does not exist or the token cannot see it`);
  if (refusal === 'denied') fail('RepositoryAccessDenied', `${what}: the git server refused the configured token`);
  fail('GitFailed', `${what} failed: ${gitFailureLine(err)}`);
}

/** How git reaches the repository (the token, or pinned addresses), decided once per step: the only calls that get credentials. */
export async function accessTo(deps: GitDeps, repository: string, opts: { readOnly?: boolean; forgeId?: string } = {}): Promise<RepositoryAccess> {
  try {
    return await repositoryAccess(repository, deps.forges ? await deps.forges.gitAccess(opts.forgeId, deps) : deps, opts);
  } catch (err) {
    if (err instanceof GitAccessRefused && err.reason === 'address') fail('RepositoryUrlRefused', `the repository URL is refused: ${err.message}`);
    if (err instanceof GitAccessRefused) fail('RepositoryAccessDenied', err.message);
    throw err;
  }
}

/** A job's clone: git in it with the remote's access settings, and the same with a step's cancellation signal. */
interface Clone {
  git: SimpleGit;
  remote(signal?: AbortSignal): SimpleGit;
  /** Git on the .git folder alone (run with `--bare`), with the remote's access for contents a partial clone lacks. */
  bare(signal?: AbortSignal): SimpleGit;
}

/** The activity running this code, or undefined outside one (a helper called from a test). */
export function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/**
 * Runs a network git step (clone, fetch, push) while heartbeating, so a repository slower than the heartbeat timeout
 * still succeeds, and gives it the activity's cancellation signal, so an archived job's git is killed, not waited for.
 */
export async function heartbeating<T>(what: string, step: (signal?: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = activityContext();
  if (!ctx) return step();
  const everyMs = Math.max(100, Math.min(1000, (ctx.info.heartbeatTimeoutMs ?? 3000) / 3));
  ctx.heartbeat(what);
  const beat = setInterval(() => ctx.heartbeat(what), everyMs);
  try {
    return await step(ctx.cancellationSignal);
  } finally {
    clearInterval(beat);
  }
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

/**
 * Clones once per job and fetches afterwards; a broken clone (killed mid-way) is replaced. The clone is partial
 * (`--filter=blob:none`): history without file contents, which git fetches for the commits checked out. So the git
 * returned keeps the remote's access settings: any later step may fetch contents the clone left out.
 */
async function ensureClone(deps: GitDeps, jobId: string, repo: RepositoryRef, commit?: string): Promise<Clone> {
  const access = await accessTo(deps, repo.repository, { forgeId: repo.forgeId });
  const dir = workspacePath(deps, jobId);
  const remote = (signal?: AbortSignal) => hardenedGit(dir, deps.workspaceDir, access.config, signal);
  // Built once the folder exists: simple-git refuses a missing one.
  const bare = (signal?: AbortSignal) => hardenedGit(path.join(dir, '.git'), deps.workspaceDir, access.config, signal);
  const clone = (): Clone => ({ git: remote(), remote, bare });
  await mkdir(deps.workspaceDir, { recursive: true });
  // Before any folder of the job is made (or taken over from a worker of before the marker), so a sweep knows whose it is.
  if (deps.workspaceOwner) await markOwner(ownerMarkerPath(deps.workspaceDir, jobId), deps.workspaceOwner);
  if (await exists(path.join(dir, '.git', 'HEAD'))) {
    // A step that needs one commit the clone already has (this turn's prepare fetched it) needs no fetch.
    if (commit && (await revParse(remote(), commit)) === commit) return clone();
    try {
      await heartbeating('fetching', async (signal) => remote(signal).fetch(['origin', '--prune', '--force']));
      return clone();
    } catch (err) {
      if (err instanceof ApplicationFailure || activityContext()?.cancellationSignal.aborted) throw err;
      await rm(dir, { recursive: true, force: true });
    }
  }
  await rm(dir, { recursive: true, force: true });
  try {
    await heartbeating('cloning', async (signal) => hardenedGit(deps.workspaceDir, deps.workspaceDir, access.config, signal).clone(access.cloneUrl, dir, ['--no-checkout', '--filter=blob:none']));
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    if (err instanceof ApplicationFailure || activityContext()?.cancellationSignal.aborted) throw err;
    classifyGitError(err, 'cloning the repository');
  }
  return clone();
}

/**
 * Puts the working tree exactly at `commit`, whatever an earlier attempt left there. `fetch: 'always'` also brings the
 * remote's branches up to date, for a step that reads them; otherwise a clone that has the commit is not fetched.
 */
async function checkout(deps: GitDeps, jobId: string, repo: RepositoryRef, commit: string, fetch: 'always' | 'if-missing'): Promise<Clone> {
  const clone = await ensureClone(deps, jobId, repo, fetch === 'if-missing' ? commit : undefined);
  // The checkout downloads the commit's file contents: a network step like the clone. Forced, it also sets the index
  // and tracked files to the commit (a staged, changed or deleted file included), as `reset --hard` would.
  await heartbeating('checking out', async (signal) => clone.remote(signal).raw(['checkout', '--force', '--detach', commit]));
  // -ff: also nested repositories a sandboxed command may have created.
  await clone.git.raw(['clean', '-ffdx']);
  return clone;
}

/** Git in the job's clone with its working tree exactly at `commit`. */
export async function checkoutClean(deps: GitDeps, jobId: string, repo: RepositoryRef, commit: string): Promise<SimpleGit> {
  return (await checkout(deps, jobId, repo, commit, 'if-missing')).git;
}

async function revParse(git: SimpleGit, ref: string): Promise<string | null> {
  try {
    return (await git.raw(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).trim() || null;
  } catch {
    return null;
  }
}

/** Lines added and deleted per file between two commits (binary files count 0). */
async function filesChanged(git: SimpleGit, from: string, to: string): Promise<FileStat[]> {
  const out = await git.raw(['diff', '--numstat', '-z', '--no-renames', from, to]);
  return out
    .split('\0')
    .filter(Boolean)
    .map((entry) => {
      const [additions = '0', deletions = '0', ...rest] = entry.split('\t');
      return { path: rest.join('\t'), additions: Number(additions) || 0, deletions: Number(deletions) || 0 };
    });
}

/** The trailer that marks a commit as a turn's own: how a retried or restarted turn recognises what it pushed. */
const turnMarker = (jobId: string, turn: number) => `Docent-Turn: ${jobId}/${turn}`;

export function createGitActivities(deps: GitDeps, journal?: TurnJournal) {
  /** The pushed commit is the turn's durable step: a retry resumes after it. Written again by a retried attempt, harmlessly. */
  async function recordPush(clone: Clone, input: CommitAndPushInput, commit: string): Promise<void> {
    if (!journal) return;
    const files = await filesChanged(clone.git, input.startCommit, commit);
    const base = branchBase(await journal.ledger.turns.list(input.jobId), input.turn, input.startCommit);
    // Diffs may read contents the partial clone lacks: a network step.
    const diff = await heartbeating('diffing', (signal) => turnDiff(clone.bare(signal), { base, startCommit: input.startCommit, commit, branch: input.branch }));
    await journal.ledger.recordPush(input.jobId, input.turn, { startCommit: input.startCommit, commit, filesChanged: files }, diff);
  }

  return {
    /** Clones (or refreshes) the job's workspace and says where the agent starts: the job branch if pushed before, else the base ref. */
    async prepareWorkspace(input: PrepareWorkspaceInput): Promise<PrepareWorkspaceResult> {
      Context.current().heartbeat('cloning');
      const { git } = await ensureClone(deps, input.jobId, input);
      const head = await revParse(git, `refs/remotes/origin/${input.branch}`);
      let startCommit = head ?? (await revParse(git, `refs/remotes/origin/${input.baseRef}`)) ?? (await revParse(git, input.baseRef));
      if (!startCommit) fail('RefNotFound', `the base ref "${input.baseRef}" does not exist in the repository`);
      // A turn that starts over after its own push (its worker died before the push was recorded) starts from the
      // commit before it, so commitAndPush finds that push instead of seeing no change and opening no pull request.
      if (head && input.turn !== undefined && (await git.raw(['log', '-1', '--format=%B', head])).includes(turnMarker(input.jobId, input.turn))) {
        startCommit = (await revParse(git, `${head}^`)) ?? head;
      }
      return { startCommit, ...(deps.workspaceQueue ? { workspaceQueue: deps.workspaceQueue } : {}) };
    },

    /** Deletes the job's working copy, context clones and sandbox HOME on this worker once the job has no instruction left; missing ones are fine. */
    async removeWorkspace(input: { jobId: string }): Promise<void> {
      await rm(workspacePath(deps, input.jobId), { recursive: true, force: true });
      await rm(contextFolder(deps.workspaceDir, input.jobId), { recursive: true, force: true });
      await rm(sandboxHomePath(deps.workspaceDir, input.jobId), { recursive: true, force: true });
      // Last: folders a removal left behind are still known as this deployment's.
      await rm(ownerMarkerPath(deps.workspaceDir, input.jobId), { force: true });
    },

    /** Commits the agent's changes on top of startCommit and pushes the job branch; a retry after a successful push pushes nothing new. */
    async commitAndPush(input: CommitAndPushInput): Promise<CommitAndPushResult> {
      // The branch's remote head tells a retry whether its push already happened: fetched every time.
      const clone = await checkout(deps, input.jobId, input, input.startCommit, 'always');
      const { git } = clone;
      const marker = turnMarker(input.jobId, input.turn);
      const remoteHead = await revParse(git, `refs/remotes/origin/${input.branch}`);
      if (remoteHead && remoteHead !== input.startCommit) {
        const [parent, message] = [await revParse(git, `${remoteHead}^`), await git.raw(['log', '-1', '--format=%B', remoteHead])];
        if (parent === input.startCommit && message.includes(marker)) {
          await recordPush(clone, input, remoteHead);
          return { commit: remoteHead };
        }
      }
      const root = workspacePath(deps, input.jobId);
      await applyChanges(root, input.changes);
      await git.raw(['add', '--all']);
      const staged = (await git.raw(['diff', '--cached', '--name-only'])).trim();
      if (!staged) return { commit: null };
      await git.raw(['commit', '--quiet', '-m', input.title, '-m', `Docent-Job: ${input.jobId}\n${marker}`]);
      const commit = (await git.raw(['rev-parse', 'HEAD'])).trim();
      try {
        await heartbeating('pushing', async (signal) => clone.remote(signal).raw(['push', 'origin', `HEAD:refs/heads/${input.branch}`]));
      } catch (err) {
        if (err instanceof ApplicationFailure || activityContext()?.cancellationSignal.aborted) throw err;
        classifyGitError(err, 'pushing the job branch');
      }
      await recordPush(clone, input, commit);
      return { commit };
    },
  };
}

async function applyChange(files: CloneFs, change: FileChange): Promise<void> {
  if (change.content === null) return files.removeFile(change.path).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)));
  if (change.mode === 'symlink') return files.createSymlink(change.path, change.content);
  // A link the agent replaced by a file (with run_command): drop the link, never write through it.
  if ((await files.inspect(change.path))?.kind === 'symlink') await files.removeFile(change.path);
  await files.writeFile(change.path, Buffer.from(change.content, change.encoding ?? 'utf8'), { executable: change.mode === 'executable' });
}

/** Writes, links and deletes files as the agent decided; every path is confined to the clone again here. */
export async function applyChanges(root: string, changes: FileChange[], owner?: FileOwner): Promise<void> {
  const files = new CloneFs(root, { owner });
  for (const change of changes) {
    try {
      await applyChange(files, change);
    } catch (err) {
      if (err instanceof PathRefused) fail('AgentLimitExceeded', `refusing a change outside the repository: ${change.path}`);
      throw err;
    }
  }
}
