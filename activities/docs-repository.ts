import { mkdtemp, rm } from 'node:fs/promises';
import type { ForgeRegistry } from '../src/forges/forge-registry';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { SimpleGit } from 'simple-git';
import { AppError } from '../src/errors';
import { GitAccessRefused, gitFailureLine, remoteRefusal, repositoryAccess, type GitAccessSettings, type RepositoryAccess, hardenedGit } from '../src/git/access';
import type { GitDocsSource } from '../workflows/docs-sync-contract';

/** The git host and its credential, as agent jobs get them (the token, or the App's installation token for the repository). */
/** How docs clones reach git: the connection a followed source resolved through (src/forges/), else the deployment's. */
export type DocsGitDeps = GitAccessSettings & { forges?: ForgeRegistry };

/** A docs page in the followed commit: its file under the docs folder and the blob that holds it. */
export interface DocsFile {
  file: string;
  blob: string;
}

export interface DocsCheckout {
  commit: string;
  files: DocsFile[];
  /** The text of a blob of this commit. */
  read(blob: string): Promise<string>;
  cleanup(): Promise<void>;
}

const docExtensions = /\.(md|mdx|markdown)$/i;
const skippedDirs = new Set(['.git', 'node_modules']);

function fail(type: 'DocsSourceNotFound' | 'InvalidDocsSource' | 'RepositoryUrlRefused' | 'RepositoryAccessDenied', message: string): never {
  throw ApplicationFailure.create({ type, message, nonRetryable: true });
}

/**
 * The credentials a docs clone gets: the same as an agent job's clone of that repository (the token, scoped to the
 * configured git host; pinned, checked addresses elsewhere). The one place that maps their refusals for docs.
 */
export async function docsRepositoryAccess(repository: string, deps: DocsGitDeps, forgeId?: string): Promise<RepositoryAccess> {
  try {
    return await repositoryAccess(repository, deps.forges ? await deps.forges.gitAccess(forgeId, deps) : deps);
  } catch (err) {
    if (err instanceof GitAccessRefused && err.reason === 'address') fail('RepositoryUrlRefused', `the docs repository URL is refused: ${err.message}`);
    if (err instanceof GitAccessRefused) fail('RepositoryAccessDenied', err.message);
    throw err;
  }
}

/** Maps git's stderr to a failure a person can act on; the token is never in it (it travels in GIT_CONFIG_* only). */
function classifyCloneError(err: unknown, input: GitDocsSource): never {
  const text = err instanceof Error ? err.message : String(err);
  if (/Remote branch .* not found|could not find remote branch/i.test(text)) fail('DocsSourceNotFound', `the ref "${input.ref}" does not exist in ${input.repository}`);
  const refusal = remoteRefusal(err);
  if (refusal === 'missing') fail('DocsSourceNotFound', `${input.repository}: the repository does not exist or the token cannot see it`);
  if (refusal === 'denied') fail('DocsSourceNotFound', `${input.repository}: the git server refused the configured credentials`);
  throw new Error(`cloning ${input.repository} failed: ${gitFailureLine(err)}`);
}

/** Heartbeats while a network step runs, and gives it the activity's cancellation signal. */
async function heartbeating<T>(what: string, step: (signal?: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  ctx.heartbeat(what);
  const beat = setInterval(() => ctx.heartbeat(what), 5_000);
  try {
    return await step(ctx.cancellationSignal);
  } finally {
    clearInterval(beat);
  }
}

/** `<mode> <type> <blob>\t<path>` entries of `git ls-tree -r -z`: the regular Markdown files under the docs folder. */
function docsFiles(listing: string, docsPath: string): DocsFile[] {
  const prefix = docsPath.replace(/^\/+|\/+$/g, '');
  const files: DocsFile[] = [];
  for (const entry of listing.split('\0').filter(Boolean)) {
    const tab = entry.indexOf('\t');
    const [mode, type, blob] = entry.slice(0, tab).split(' ');
    const repoPath = entry.slice(tab + 1);
    // Symlinks and submodules are never followed: a link could point anywhere on the worker.
    if (type !== 'blob' || (mode !== '100644' && mode !== '100755') || !blob) continue;
    if (prefix && !repoPath.startsWith(`${prefix}/`)) continue;
    const file = prefix ? repoPath.slice(prefix.length + 1) : repoPath;
    if (!docExtensions.test(file) || file.split('/').some((part) => skippedDirs.has(part))) continue;
    files.push({ file, blob });
  }
  return files.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

/**
 * A shallow clone of the followed ref without a working tree, through the agent's hardened git: the docs are read
 * from git's objects by blob, so repository content never becomes files on the worker.
 */
export async function checkoutDocs(input: GitDocsSource, deps: DocsGitDeps): Promise<DocsCheckout> {
  const access = await docsRepositoryAccess(input.repository, deps, input.forgeId).catch((err: unknown) => {
    if (err instanceof AppError) fail('InvalidDocsSource', err.message);
    throw err;
  });
  const parent = await mkdtemp(path.join(os.tmpdir(), 'docent-docs-sync-'));
  const cleanup = () => rm(parent, { recursive: true, force: true });
  const dir = path.join(parent, 'repo');
  let git: SimpleGit;
  try {
    await heartbeating('cloning', (signal) =>
      hardenedGit(parent, parent, access.config, signal).clone(access.cloneUrl, dir, ['--depth', '1', '--branch', input.ref, '--single-branch', '--no-tags', '--no-checkout']),
    );
    git = hardenedGit(dir, parent);
  } catch (err) {
    await cleanup();
    if (err instanceof ApplicationFailure) throw err;
    classifyCloneError(err, input);
  }
  try {
    const commit = (await git.raw(['rev-parse', 'HEAD'])).trim();
    const files = docsFiles(await git.raw(['ls-tree', '-r', '-z', '--full-tree', 'HEAD']), input.docsPath);
    return { commit, files, read: (blob) => git.raw(['cat-file', 'blob', blob]), cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
