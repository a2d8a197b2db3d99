import { createHash } from 'node:crypto';
import type { SimpleGit } from 'simple-git';
import type { ProjectChecks, SetupCacheSpec } from '../../workflows/agent-job-contract';

/** Bumped when what an entry holds, or how it is restored, changes: older entries then simply never match. */
const FORMAT = 1;

/**
 * The key files as stored at the commit, by blob id (git's own content hash): read from the object database, never
 * from the working tree a hostile repository (or an earlier command) could have prepared. A missing file counts as absent.
 */
async function keyFileBlobs(git: SimpleGit, commit: string, files: string[]): Promise<Array<[string, string]>> {
  const blobs: Array<[string, string]> = [];
  for (const file of [...files].sort()) {
    const blob = await git.raw(['rev-parse', '--verify', '--quiet', `${commit}:${file}`]).then(
      (out) => out.trim() || 'absent',
      () => 'absent',
    );
    blobs.push([file, blob]);
  }
  return blobs;
}

/**
 * The key of a setup: everything that changes what it leaves behind. The commands, the key files and the top-level
 * .gitignore at the job's commit, the sandbox image, the network choice, the project and its cache generation. Setups that get secrets are
 * never cached (docs/decisions/2026-11-24-cached-setup.md), so no secret goes into it.
 */
export async function setupCacheKey(git: SimpleGit, commit: string, checks: ProjectChecks, cache: SetupCacheSpec, image: string): Promise<string> {
  const parts = {
    format: FORMAT,
    project: cache.project,
    generation: cache.generation,
    setup: checks.setup,
    keyFiles: await keyFileBlobs(git, commit, cache.keyFiles),
    // What the clone ignores decides what an entry holds, and which restored files would show as changes.
    ignores: await keyFileBlobs(git, commit, ['.gitignore']),
    image,
    network: checks.network,
    allowHosts: checks.allowHosts ?? [],
  };
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}
