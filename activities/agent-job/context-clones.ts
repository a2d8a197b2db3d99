import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { AppError } from '../../src/errors';
import { plainRepositoryName, hardenedGit } from '../../src/git/access';
import { MAX_CONTEXT_REPOSITORIES, type ContextRepository } from '../../workflows/agent-job-contract';
import { accessTo, activityContext, classifyGitError, contextFolder, heartbeating, type GitDeps } from './git';

/** A context repository cloned on this worker: the name the agent's tools know it by, and where its files are. */
export interface ContextClone {
  /** `owner/name`. */
  name: string;
  ref?: string;
  root: string;
}

function refused(message: string): never {
  throw ApplicationFailure.create({ type: 'RepositoryUrlRefused', message, nonRetryable: true });
}

/** The clone's folder name, checked again here: the workflow's input may not come from the gateway. */
function nameOf(deps: GitDeps, repo: ContextRepository): string {
  try {
    return plainRepositoryName(repo.repo, deps.gitBaseUrl);
  } catch (err) {
    if (err instanceof AppError) refused(`context repository: ${err.message}`);
    throw err;
  }
}

/** A shallow clone of the ref (or the default branch), made once per worker and job; a clone killed mid-way is made again. */
async function shallowClone(deps: GitDeps, repo: ContextRepository, dir: string): Promise<void> {
  if (
    await stat(path.join(dir, '.git', 'HEAD')).then(
      () => true,
      () => false,
    )
  )
    return;
  // Only read: with a GitHub App, a token that can read the one repository and nothing more.
  const access = await accessTo(deps, repo.repo, { readOnly: true, forgeId: repo.forgeId });
  await rm(dir, { recursive: true, force: true });
  await mkdir(path.dirname(dir), { recursive: true, mode: 0o755 });
  const branch = repo.ref ? ['--branch', repo.ref] : [];
  try {
    await heartbeating('cloning context', (signal) =>
      hardenedGit(deps.workspaceDir, deps.workspaceDir, access.config, signal).clone(access.cloneUrl, dir, ['--depth', '1', '--single-branch', '--no-tags', ...branch]),
    );
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    if (err instanceof ApplicationFailure || activityContext()?.cancellationSignal.aborted) throw err;
    const text = err instanceof Error ? err.message : String(err);
    if (/Remote branch .* not found/i.test(text)) {
      throw ApplicationFailure.create({ type: 'RefNotFound', message: `the ref "${repo.ref}" does not exist in the context repository ${repo.repo}`, nonRetryable: true });
    }
    classifyGitError(err, `cloning the context repository ${repo.repo}`);
  }
}

/**
 * Clones the job's context repositories beside its clone (`<jobId>.context/<owner>/<name>`), with the same access rules
 * as the job's own (an App's installation token for each one, read-only; hardened git); removed with the job's workspace.
 */
export async function ensureContextClones(deps: GitDeps, jobId: string, repos: ContextRepository[] | undefined): Promise<ContextClone[]> {
  if (!repos?.length) return [];
  if (repos.length > MAX_CONTEXT_REPOSITORIES) refused(`a job may name at most ${MAX_CONTEXT_REPOSITORIES} context repositories`);
  const folder = contextFolder(deps.workspaceDir, jobId);
  const clones: ContextClone[] = [];
  for (const repo of repos) {
    const name = nameOf(deps, repo);
    const root = path.join(folder, name);
    await shallowClone(deps, repo, root);
    clones.push({ name, root, ...(repo.ref ? { ref: repo.ref } : {}) });
  }
  return clones;
}

/** What the agent is told of them in its opening message. */
export function contextNote(clones: ContextClone[], commands: boolean): string {
  if (clones.length === 0) return '';
  const list = clones.map((c) => `- ${c.name}${c.ref ? ` at ${c.ref}` : ''}`).join('\n');
  const inSandbox = commands ? '; run_command sees them read-only at /context/<owner>/<name>' : '';
  return `Read-only context repositories (pass \`repository: "owner/name"\` to list_files, read_file and search_files to read them; they cannot be changed, and only the job's repository is committed${inSandbox}):\n${list}`;
}
