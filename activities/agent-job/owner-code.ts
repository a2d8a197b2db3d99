import type { SimpleGit } from 'simple-git';

/** The commit a ref names in the job's clone (the remote's branch first), or null when it names none. */
export async function commitOf(git: SimpleGit, ref: string): Promise<string | null> {
  for (const name of [`refs/remotes/origin/${ref}`, ref]) {
    const found = await git.raw(['rev-parse', '--verify', '--quiet', `${name}^{commit}`]).then(
      (out) => out.trim() || null,
      () => null,
    );
    if (found) return found;
  }
  return null;
}

/**
 * Whether a turn's starting commit is code the project's owners wrote: the base ref's commit or one of its
 * ancestors. A follow-up turn starts from the job branch, whose commits the model made, so it is not.
 */
export async function startsAtBaseRef(git: SimpleGit, baseRef: string | undefined, startCommit: string): Promise<boolean> {
  if (!baseRef) return false;
  const base = await commitOf(git, baseRef);
  if (!base) return false;
  if (base === startCommit) return true;
  // Not `merge-base --is-ancestor`: simple-git resolves on its exit code 1 when git prints nothing to stderr.
  const common = await git.raw(['merge-base', startCommit, base]).then(
    (out) => out.trim(),
    () => '',
  );
  return common === startCommit;
}
