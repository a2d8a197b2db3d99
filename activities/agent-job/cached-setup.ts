import { randomBytes } from 'node:crypto';
import { chown, copyFile, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { SimpleGit } from 'simple-git';
import type { CommandResult } from '../../src/sandbox';
import { HOME } from '../../src/sandbox/bwrap-args';
import { sandboxImageIdentity } from '../../src/sandbox/image-identity';
import type { CheckResult, ProjectChecks } from '../../workflows/agent-job-contract';
import { keptOutputBytes, runSetup, type TurnSandbox } from './sandbox-workspace';
import { archiveArgs, type ArchiveWriter, extractCommand } from './setup-archive';
import type { CachedSetup, SetupCache } from './setup-cache';
import { setupCacheKey } from './setup-cache-key';

type Run = (command: string) => Promise<CommandResult>;

export interface CachedSetupInput {
  /** Undefined when DOCENT_SETUP_CACHE=off. */
  cache?: SetupCache;
  checks: ProjectChecks;
  /** The job's clone at `commit`, and the turn's sandbox HOME on the worker's side. */
  git: SimpleGit;
  commit: string;
  root: string;
  home: string;
  sandbox: TurnSandbox;
  /** Runs a setup command with the turn's secrets, its output redacted. */
  run: Run;
  /** Whether setup gets project secrets this turn: then nothing is cached (docs/decisions/2026-11-24-cached-setup.md). */
  withSecrets: boolean;
  /** Whether the turn starts at the base ref (code the project's owners wrote), not at a commit the model made. */
  ownerCode: boolean;
  /** The sandbox's extra read-only paths, part of its image. */
  readOnlyPaths: readonly string[];
  signal?: AbortSignal;
  /** Told once this worker holds the project's setup (a hit, or a stored miss), so later jobs prefer it. */
  onHeld?: (project: string) => Promise<void>;
}

export interface CachedSetupOutcome {
  /** The turn's setup entries, each saying how the cache served it. */
  results: CheckResult[];
  /** Why a stored entry was refused (and dropped) before setup ran instead. */
  refused?: string;
  /** Why this setup's result was not stored (the next job on the same key runs setup again). */
  notStored?: string;
}

/** Files the worker writes into HOME itself (prepareTurnSandbox): never part of an entry. */
const WORKER_HOME_FILES = new Set(['.gitconfig']);
/** Where the archives wait in HOME while the sandbox unpacks them. */
const RESTORE_FOLDER = '.docent-restore';

const tagged = (results: CheckResult[], cache: NonNullable<CheckResult['cache']>) => results.map((r) => ({ ...r, cache }));

/** Copies the archives into the fresh HOME (no command has run there yet this turn), for the sandbox's user to read. */
async function stageArchives(entry: CachedSetup, input: CachedSetupInput): Promise<void> {
  const staging = path.join(input.home, RESTORE_FOLDER);
  await mkdir(staging, { mode: 0o700 });
  await Promise.all((['workspace', 'home'] as const).map((root) => copyFile(entry.archives[root], path.join(staging, `${root}.tar.zst`))));
  const owner = input.sandbox.owner;
  if (owner) for (const p of [staging, path.join(staging, 'workspace.tar.zst'), path.join(staging, 'home.tar.zst')]) await chown(p, owner.uid, owner.gid);
}

/** Unpacks the staged archives inside the sandbox as its user: no link or path of theirs reaches past what a setup command could. */
async function unpack(input: CachedSetupInput): Promise<CommandResult> {
  const staging = path.join(input.home, RESTORE_FOLDER);
  const inSandbox = `${HOME}/${RESTORE_FOLDER}`;
  // Both at once: unpacking is mostly waiting on the disk.
  const command = `${extractCommand(`${inSandbox}/workspace.tar.zst`, '/workspace')} & w=$!; ${extractCommand(`${inSandbox}/home.tar.zst`, HOME)}; h=$?; wait $w; w=$?`;
  try {
    return await input.sandbox.run(`${command}; rm -rf -- "${inSandbox}"; [ $w -eq 0 ] && [ $h -eq 0 ]`, { signal: input.signal, headBytes: 0, tailBytes: keptOutputBytes });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Back to the checkout and an empty HOME after a restore that stopped half-way. */
async function discardRestore(input: CachedSetupInput): Promise<void> {
  await input.git.raw(['clean', '-ffdx', '--quiet']);
  for (const name of await readdir(input.home)) if (!WORKER_HOME_FILES.has(name)) await rm(path.join(input.home, name), { recursive: true, force: true });
}

/** What setup added: the clone's untracked and ignored paths (wholly new folders as one), and HOME's entries. */
async function setupLeftovers(input: CachedSetupInput): Promise<{ workspace: string[]; home: string[] }> {
  const others = await input.git.raw(['ls-files', '-z', '--others', '--directory', '--no-empty-directory']);
  const home = (await readdir(input.home)).filter((name) => !WORKER_HOME_FILES.has(name));
  // Without the trailing slash git puts on folders: tar must archive what is there, never resolve through it.
  return {
    workspace: others
      .split('\0')
      .filter(Boolean)
      .map((p) => p.replace(/\/+$/, '')),
    home,
  };
}

/**
 * Archives a root inside the turn's sandbox, as its user, within its limits (time, memory, processes, cgroup), and
 * killed with it when the turn is cancelled: the worker never runs tar over files a setup command left. The list of
 * paths goes in a file of a fresh name in HOME (never written through a link setup left), removed afterwards.
 */
function sandboxArchive(input: CachedSetupInput): ArchiveWriter {
  return async (root, paths, into, signal) => {
    const list = `.docent-store-${randomBytes(6).toString('hex')}`;
    await writeFile(path.join(input.home, list), paths.map((p) => `${p}\0`).join(''), { flag: 'wx', mode: 0o644 });
    try {
      const args = archiveArgs(root === 'workspace' ? '/workspace' : HOME, `${HOME}/${list}`).map((a) => `'${a}'`);
      const r = await input.sandbox.run(`tar ${args.join(' ')} 2>/dev/null`, { signal, stdout: into });
      if (r.exitCode !== 0) throw new Error(r.stoppedBy ? `stopped (${r.stoppedBy})` : `tar exited with ${r.exitCode}`);
    } finally {
      await rm(path.join(input.home, list), { force: true });
    }
  };
}

/** The preference is a hint: failing to record it never fails the turn. */
async function held(input: CachedSetupInput, project: string): Promise<void> {
  await input.onHeld?.(project).catch(() => undefined);
}

/**
 * The project's setup for one turn, through the worker's setup cache: a stored result for the same key is restored
 * (then the maintenance commands run); otherwise setup runs and, if every command passed, its result is stored.
 */
export async function runCachedSetup(input: CachedSetupInput): Promise<CachedSetupOutcome> {
  const { checks, cache } = input;
  if (checks.setup.length === 0) return { results: [] };
  const spec = checks.setupCache;
  if (!cache || !spec || input.withSecrets) return { results: tagged(await runSetup(checks.setup, input.run), 'off') };

  const key = await setupCacheKey(input.git, input.commit, checks, spec, await sandboxImageIdentity(input.readOnlyPaths));
  const entry = await cache.find(key);
  let refused: string | undefined;
  if (entry) {
    const started = performance.now();
    // The copy needs no verdict: a refused entry's copy goes with the rest of HOME below.
    const [why, unstaged] = await Promise.all([
      cache.refusal(entry),
      stageArchives(entry, input).then(
        () => undefined,
        (err: Error) => `the archives could not be copied: ${err.message}`,
      ),
    ]);
    refused = why ?? unstaged;
    const restored = refused ? undefined : await unpack(input);
    if (restored?.exitCode === 0) {
      const hit: CheckResult = {
        kind: 'setup',
        command: `restore the cached result of: ${checks.setup.join(' && ')}`,
        exitCode: 0,
        durationMs: Math.round(performance.now() - started),
        output: restored.output,
        cache: 'hit',
      };
      await held(input, spec.project);
      return { results: [hit, ...tagged(await runSetup(spec.maintenance, input.run), 'hit')] };
    }
    refused ??= `unpacking failed (exit ${restored?.exitCode}): ${restored?.output.slice(-500) ?? ''}`;
    await cache.drop(key);
    await discardRestore(input);
  }
  const results = tagged(await runSetup(checks.setup, input.run), 'miss');
  let notStored: string | undefined;
  // Only a setup of the owners' code is kept: a follow-up turn's setup ran code the agent wrote (its package.json
  // scripts, say), whose result must never be restored into the project's later jobs.
  if (!input.ownerCode) notStored = 'the turn starts from commits the agent made, whose setup is never stored';
  else if (results.every((r) => r.exitCode === 0)) {
    const left = await setupLeftovers(input);
    const roots = { workspace: { dir: input.root, paths: left.workspace }, home: { dir: input.home, paths: left.home } };
    // A result that cannot be stored (a file setup left unreadable, a full disk) costs the next job its hit, not this turn.
    const outcome = await cache
      .store(key, { project: spec.project, generation: spec.generation }, roots, { write: sandboxArchive(input), signal: input.signal })
      .catch((err: Error) => ({ stored: false as const, reason: err.message }));
    if (outcome.stored) await held(input, spec.project);
    else notStored = outcome.reason;
  }
  // Said where the user reads setup's output (job events, checks): why the next job on this key runs setup again.
  const last = results.at(-1);
  if (notStored && last) results[results.length - 1] = { ...last, output: `${last.output}${last.output.endsWith('\n') || !last.output ? '' : '\n'}[setup cache] not stored: ${notStored}\n` };
  return { results, ...(refused ? { refused } : {}), ...(notStored ? { notStored } : {}) };
}
