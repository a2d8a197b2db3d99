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
 * Files whose content decides what setup executes, besides the project's key files: the manifests package managers
 * and build tools read (an npm install runs package.json's scripts whatever the lockfile says), wherever they exist.
 */
const MANIFESTS = [
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'pnpm-workspace.yaml',
  '.npmrc',
  '.yarnrc.yml',
  'requirements.txt',
  'requirements-dev.txt',
  'pyproject.toml',
  'setup.py',
  'setup.cfg',
  'Pipfile',
  'Pipfile.lock',
  'poetry.lock',
  'uv.lock',
  'Makefile',
  'go.mod',
  'go.sum',
  'Cargo.toml',
  'Cargo.lock',
  'Gemfile',
  'Gemfile.lock',
  'composer.json',
  'composer.lock',
  'pom.xml',
  'build.gradle',
];

/** The repository files a setup command names (`bash scripts/setup.sh`, `pip install -r reqs/dev.txt`): they run too. */
function namedFiles(commands: string[]): string[] {
  const words = commands.flatMap((c) => c.split(/[\s;&|<>()'"=]+/));
  const paths = words.filter((w) => /^[\w.][\w./-]*$/.test(w) && /[./]/.test(w) && !w.includes('..') && !w.startsWith('/'));
  return [...new Set(paths)].slice(0, 100);
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
    executed: await keyFileBlobs(git, commit, [...new Set([...MANIFESTS, ...namedFiles(checks.setup)])]),
    // What the clone ignores decides what an entry holds, and which restored files would show as changes.
    ignores: await keyFileBlobs(git, commit, ['.gitignore']),
    image,
    network: checks.network,
    allowHosts: checks.allowHosts ?? [],
  };
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}
