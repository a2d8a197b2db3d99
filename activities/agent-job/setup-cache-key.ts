import { createHash } from 'node:crypto';
import type { SimpleGit } from 'simple-git';
import type { ProjectChecks, SetupCacheSpec } from '../../workflows/agent-job-contract';

/** Bumped when what an entry holds, or how it is restored, changes: older entries then simply never match. */
const FORMAT = 2;

/**
 * The key files as stored at the commit, by blob id (git's own content hash): read from the object database, never
 * from the working tree a hostile repository (or an earlier command) could have prepared. A missing file counts as absent.
 */
async function keyFileBlobs(git: SimpleGit, commit: string, files: string[]): Promise<Array<[string, string]>> {
  const sorted = [...new Set(files)].sort();
  // One ls-tree for them all: a path it does not list is absent at the commit.
  const listed = new Map<string, string>();
  const out = sorted.length ? await git.raw(['ls-tree', '-z', '--full-tree', commit, '--', ...sorted]).catch(() => '') : '';
  for (const line of out.split('\0').filter(Boolean)) {
    const [info, file] = line.split('\t') as [string, string];
    listed.set(file, info.split(' ')[2] ?? 'absent');
  }
  return sorted.map((file) => [file, listed.get(file) ?? 'absent']);
}

/**
 * Manifests that package managers and build tools read (and whose scripts they run) at the top of a repository: setup
 * may run them whether or not the project named them as key files, so each one present is always part of the key.
 */
const MANIFESTS =
  /^(package\.json|package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|pnpm-workspace\.yaml|\.npmrc|\.yarnrc(\.yml)?|\.pnpmfile\.cjs|pyproject\.toml|setup\.py|setup\.cfg|(requirements|constraints)[\w.-]*\.(txt|in)|Pipfile(\.lock)?|poetry\.lock|uv\.lock|tox\.ini|noxfile\.py|(GNU)?[Mm]akefile|Cargo\.(toml|lock)|go\.(mod|sum)|Gemfile(\.lock)?|Rakefile|composer\.(json|lock)|pom\.xml|build\.gradle(\.kts)?|settings\.gradle(\.kts)?|justfile|Taskfile\.ya?ml)$/;

/** A word of a setup command that may name a file of the repository (`./scripts/setup.sh`, `tools/install.py`). */
const PATH_WORD = /^(\.\/)?[\w@+][\w.@+/-]*$/;

/** `mode type id\tname` entries of `git ls-tree -z` as [name, id]. */
const treeEntries = (out: string): Array<[string, string]> =>
  out
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t');
      return [line.slice(tab + 1), line.slice(0, tab).split(' ')[2] ?? ''];
    });

/**
 * What setup executes besides its commands, by blob id at the commit: every well-known manifest at the top of the
 * tree, every tracked file a setup command names, and the manifests of every folder one names (`cd app && npm ci`):
 * keying a whole folder would make every source edit a miss.
 */
async function executedFiles(git: SimpleGit, commit: string, setup: string[]): Promise<Array<[string, string]>> {
  const manifestsIn = async (folder?: string) =>
    treeEntries(await git.raw(['ls-tree', '-z', '--full-tree', folder ? `${commit}:${folder}` : commit]))
      .filter(([name]) => MANIFESTS.test(name))
      .map(([name, id]): [string, string] => [folder ? `${folder}/${name}` : name, id]);
  const words = [
    ...new Set(
      setup
        .flatMap((c) => c.split(/[\s;&|()<>`'"=]+/))
        .filter((w) => PATH_WORD.test(w) && !w.split('/').includes('..'))
        .map((w) => w.replace(/^\.\//, '').replace(/\/+$/, '')),
    ),
  ];
  // Each word is taken literally: none of them is a pathspec pattern or magic.
  const named = words.length ? await git.raw(['ls-tree', '-z', '--full-tree', commit, '--', ...words.map((w) => `:(literal)${w}`)]) : '';
  const found: Array<[string, string]> = [];
  for (const line of named.split('\0').filter(Boolean)) {
    const [meta = '', name = ''] = line.split('\t');
    const [, type, id = ''] = meta.split(' ');
    if (type === 'tree') found.push(...(await manifestsIn(name)));
    else found.push([name, id]);
  }
  return [...new Map([...(await manifestsIn()), ...found]).entries()].sort(([x], [y]) => x.localeCompare(y));
}

/**
 * The key of a setup: everything that changes what it leaves behind. The commands, the key files, the manifests and
 * files setup executes, and the top-level .gitignore at the job's commit, the sandbox image, the network choice, the project and its cache generation. Setups that get secrets are
 * never cached (docs/decisions/2026-11-24-cached-setup.md), so no secret goes into it.
 */
export async function setupCacheKey(git: SimpleGit, commit: string, checks: ProjectChecks, cache: SetupCacheSpec, image: string): Promise<string> {
  const parts = {
    format: FORMAT,
    project: cache.project,
    generation: cache.generation,
    setup: checks.setup,
    keyFiles: await keyFileBlobs(git, commit, cache.keyFiles),
    // What setup executes: a follow-up turn that edits package.json scripts gets a key of its own.
    executed: await executedFiles(git, commit, checks.setup),
    // What the clone ignores decides what an entry holds, and which restored files would show as changes.
    ignores: await keyFileBlobs(git, commit, ['.gitignore']),
    image,
    network: checks.network,
    allowHosts: checks.allowHosts ?? [],
  };
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}
