// The archives a cached setup is kept in: written by the system tar (zstd), listed by node-tar before any restore.
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Parser, type ReadEntry } from 'tar';

/** What an archive is unpacked into: the clone (where .git is off limits) or the sandbox's HOME. */
export type ArchiveRoot = 'workspace' | 'home';

/** Where the sandbox sees each root (src/sandbox/bwrap-args.ts), for absolute link targets. */
const MOUNT: Record<ArchiveRoot, string> = { workspace: '/workspace', home: '/home/sandbox' };
/** Absolute links into the sandbox's read-only system are kept (a Python venv's `bin/python -> /usr/bin/python3`). */
const SYSTEM_PREFIX = '/usr/';
const KINDS = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory', 'SymbolicLink', 'Link']);

const isGitName = (name: string) => name.toLowerCase() === '.git';

/** A path below the root as components, or a reason it is not one. */
function below(p: string): string[] | string {
  if (p.startsWith('/')) return `absolute path ${JSON.stringify(p)}`;
  const parts = p.split('/').filter((c) => c !== '' && c !== '.');
  if (parts.includes('..')) return `path ${JSON.stringify(p)} climbs out with ..`;
  return parts;
}

/** Why one entry must not be restored, or undefined when it may. */
function refusal(entry: ReadEntry, root: ArchiveRoot, links: Set<string>): string | undefined {
  if (!KINDS.has(entry.type)) return `${JSON.stringify(entry.path)} is a ${entry.type}`;
  const parts = below(entry.path);
  if (typeof parts === 'string') return parts;
  if (root === 'workspace' && parts.some(isGitName)) return `${JSON.stringify(entry.path)} is inside .git`;
  // Nothing may be written through a link the same archive made.
  for (let i = 1; i < parts.length; i++) if (links.has(parts.slice(0, i).join('/'))) return `${JSON.stringify(entry.path)} goes through a symbolic link`;
  const target = entry.linkpath ?? '';
  if (entry.type === 'Link') {
    const to = below(target);
    if (typeof to === 'string' || (root === 'workspace' && to.some(isGitName))) return `hard link ${JSON.stringify(entry.path)} leads outside`;
  }
  if (entry.type === 'SymbolicLink') {
    links.add(parts.join('/'));
    if (target.startsWith(SYSTEM_PREFIX) && !target.split('/').includes('..')) return undefined;
    const inside = target.startsWith(`${MOUNT[root]}/`) ? target.slice(MOUNT[root].length + 1) : target;
    const resolved = path.posix.normalize(path.posix.join(...parts.slice(0, -1), inside));
    if (inside.startsWith('/') || resolved === '..' || resolved.startsWith('../')) return `symbolic link ${JSON.stringify(entry.path)} -> ${JSON.stringify(target)} leads outside`;
    if (root === 'workspace' && resolved.split('/').some(isGitName)) return `symbolic link ${JSON.stringify(entry.path)} leads into .git`;
  }
  return undefined;
}

/** Reads every header of a zstd tar archive; returns why it must not be restored, or undefined when every entry may. */
export async function archiveRefusal(file: string, root: ArchiveRoot): Promise<string | undefined> {
  const links = new Set<string>();
  let found: string | undefined;
  const zstd = spawn('zstd', ['--decompress', '--stdout', '--quiet', '--', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  zstd.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const parser = new Parser({
    strict: true,
    onReadEntry: (entry) => {
      found ??= refusal(entry, root, links);
      entry.resume();
    },
  });
  const parsed = new Promise<void>((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', reject);
  });
  const exited = new Promise<number>((resolve) => zstd.on('close', (code) => resolve(code ?? 1)));
  // An archive of nothing (a setup that left HOME empty) is only zero blocks, which node-tar calls unrecognized.
  let zeros = true;
  zstd.stdout.on('data', (chunk: Buffer) => {
    zeros &&= chunk.every((b) => b === 0);
  });
  zstd.stdout.pipe(parser);
  try {
    await parsed;
  } catch (err) {
    if (zeros && (await exited) === 0 && zeros) return undefined;
    zstd.kill();
    return `the archive is unreadable: ${(err as Error).message}`;
  }
  if ((await exited) !== 0) return `the archive is unreadable: ${stderr.trim()}`;
  return found;
}

/** Writes one root's archive to `into`, or rejects; stopped at once when `signal` aborts (a budget, a deadline, a cancel). */
export type ArchiveWriter = (root: ArchiveRoot, paths: string[], into: NodeJS.WritableStream, signal: AbortSignal) => Promise<void>;

/** The tar arguments that archive a NUL-separated list of paths below `dir` to standard output, zstd-compressed. */
export function archiveArgs(dir: string, listFile: string): string[] {
  return ['--create', '--zstd', '--file=-', `--directory=${dir}`, '--ignore-case', '--exclude=.git', '--null', '--verbatim-files-from', `--files-from=${listFile}`];
}

/**
 * An archive written by the worker's own tar (benchmarks and tests of the cache itself; the agent's turns archive
 * inside their sandbox, activities/agent-job/cached-setup.ts). Paths come on stdin and are never taken as options.
 */
export function workerArchive(dirs: Record<ArchiveRoot, string>): ArchiveWriter {
  return (root, paths, into, signal) =>
    new Promise((resolve, reject) => {
      const tar = spawn('tar', archiveArgs(dirs[root], '-'), { stdio: ['pipe', 'pipe', 'pipe'], signal, killSignal: 'SIGKILL' });
      let stderr = '';
      tar.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      tar.stdout.pipe(into, { end: false });
      tar.on('error', reject);
      tar.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`tar exited with ${code}: ${stderr.trim().slice(0, 500)}`))));
      tar.stdin.on('error', () => undefined);
      tar.stdin.end(paths.map((p) => `${p}\0`).join(''));
    });
}

/** The shell command that unpacks an archive inside the sandbox: never over a file the checkout already has. */
export function extractCommand(archive: string, into: string): string {
  return `tar --extract --zstd --file="${archive}" --directory="${into}" --skip-old-files --no-same-owner`;
}

/** Stops a worker's start when the setup cache is on but tar or zstd is missing; the error names the fix. */
export async function requireArchiveTools(): Promise<void> {
  for (const tool of ['tar', 'zstd']) {
    await promisify(execFile)(tool, ['--version']).catch(() => {
      throw new Error(`DOCENT_SETUP_CACHE=on needs ${tool} on the worker (apt-get install ${tool}), or set DOCENT_SETUP_CACHE=off`);
    });
  }
}
