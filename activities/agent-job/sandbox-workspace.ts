// A turn's sandbox, and every command run in it: the project's setup and checks and the model's run_command, each
// with or without the project's secrets and its output redacted of them.
import { chmod, lchown, mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SandboxConfig } from '../../src/config';
import { probeSandbox, runInSandbox, type CommandResult, type RunOptions, type SandboxSpec } from '../../src/sandbox';
import { setUpCgroup, type CgroupSetup } from '../../src/sandbox/cgroup';
import { requireRelay, startTurnEgress, type EgressSink } from '../../src/sandbox/egress';
import type { CheckResult } from '../../workflows/agent-job-contract';
import type { FileOwner } from './clone-fs';
import type { TurnSecrets } from './setup-secrets';

/** One turn's sandbox: the clone writable, a private HOME, and the project's network choice. */
export interface TurnSandbox {
  /** Who must own the worktree's files for sandboxed commands to edit them (set when the worker runs as root). */
  owner?: FileOwner;
  run(command: string, opts?: RunOptions): Promise<CommandResult>;
  /** Gives files git (running as the worker) just wrote back to the sandbox's user. */
  handOver(): Promise<void>;
  /** The turn's egress proxy (network on): the worker's own requests for the turn (check_links) go through it too. */
  egressSocket?: string;
  /** Stops the turn's egress proxy (network on) and writes its last events. */
  close(): Promise<void>;
}

/** The project's network choice for a turn, and where the egress proxy's connections are recorded. */
export interface TurnNetwork {
  network: boolean;
  allowHosts?: string[];
  onEgress?: EgressSink;
}

/** What a turn's commands see besides the clone: the job's context repositories, read-only (absent: none). */
export interface TurnMounts {
  context?: string;
}

// Once per worker process: the auto setting moves the worker itself into a leaf cgroup.
let cgroupSetup: Promise<CgroupSetup> | undefined;
const sandboxCgroup = (config: SandboxConfig) => (cgroupSetup ??= setUpCgroup(config.cgroup));

/** Hands the worktree (but not .git, which stays the worker's) to the sandbox's user. */
async function chownWorktree(dir: string, owner: FileOwner, top = true): Promise<void> {
  await lchown(dir, owner.uid, owner.gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (top && entry.name === '.git') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownWorktree(full, owner, false);
    else await lchown(full, owner.uid, owner.gid);
  }
}

// RLIMIT_NPROC does not hold for uid 0, so a root worker runs commands as an unprivileged uid.
const sandboxOwner = (config: SandboxConfig) => (process.getuid?.() === 0 ? config.runAs : undefined);

function sandboxSpec(config: SandboxConfig, workspace: string, home: string, network: boolean, extra: Partial<SandboxSpec> = {}): SandboxSpec {
  return {
    workspace,
    home,
    network,
    ...extra,
    limits: config.limits,
    runAs: sandboxOwner(config),
    readOnlyPaths: config.readOnlyPaths,
    bwrapPath: config.bwrapPath,
  };
}

/** Sets up the sandbox for one turn of a job: an empty HOME, the clone handed to the sandbox's user, and the egress proxy when network is on. */
export async function prepareTurnSandbox(config: SandboxConfig, workspace: string, home: string, net: TurnNetwork, mounts: TurnMounts = {}): Promise<TurnSandbox> {
  const owner = sandboxOwner(config);
  await rm(home, { recursive: true, force: true });
  await mkdir(home, { recursive: true, mode: 0o700 });
  // Inside, .git belongs to the worker: without this, git run by the agent or a check calls the clone "dubious".
  await writeFile(path.join(home, '.gitconfig'), '[safe]\n\tdirectory = /workspace\n');
  const handOver = async () => {
    if (owner) await chownWorktree(workspace, owner);
  };
  if (owner) await chownWorktree(home, owner);
  await handOver();
  const { dir: cgroup } = await sandboxCgroup(config);
  const egress = net.network ? await startTurnEgress({ operatorAllow: config.egressAllow, allowHosts: net.allowHosts ?? [], owner, onEvent: net.onEgress }) : undefined;
  const spec = sandboxSpec(config, workspace, home, net.network, { egressSocket: egress?.socketPath, egressLoopback: egress?.loopback, cgroup, ...mounts });
  return { owner, handOver, egressSocket: egress?.socketPath, run: (command, opts) => runInSandbox(spec, command, opts), close: async () => egress?.close() };
}

/**
 * Stops a worker's start when sandboxed commands cannot run on this machine; the error names the fix. Returns what
 * the worker should log about cgroup limits (applied, or why not and how to get them).
 */
export async function probeWorkerSandbox(config: SandboxConfig, workspaceDir: string): Promise<CgroupSetup> {
  await mkdir(workspaceDir, { recursive: true });
  // The sandbox's user reaches each clone through this folder: it may pass through it, not list it.
  const { mode } = await stat(workspaceDir);
  if (sandboxOwner(config) && (mode & 0o001) === 0) await chmod(workspaceDir, (mode & 0o7777) | 0o001);
  const dir = path.join(workspaceDir, '.sandbox-probe');
  await mkdir(path.join(dir, 'workspace'), { recursive: true });
  // Any project may turn its network on: a worker that could not relay to the egress proxy says so now.
  await requireRelay();
  try {
    await prepareTurnSandbox(config, path.join(dir, 'workspace'), path.join(dir, 'home'), { network: false });
    const setup = await sandboxCgroup(config);
    await probeSandbox(sandboxSpec(config, path.join(dir, 'workspace'), path.join(dir, 'home'), false, { cgroup: setup.dir }));
    return setup;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Runs a command with the turn's secrets in its environment (or without), its output redacted as it streams out of
 * the sandbox, before it is cut to head and tail, so a secret printed across the cut is still replaced whole.
 */
export function redactedRun(sandbox: TurnSandbox, secrets: TurnSecrets, giveSecrets: boolean) {
  return async (command: string, opts: RunOptions = {}): Promise<CommandResult> => {
    const env = giveSecrets && Object.keys(secrets.env).length ? { env: { ...opts.env, ...secrets.env } } : {};
    const r = await sandbox.run(command, { ...opts, ...env, ...(secrets.stream ? { redact: secrets.stream } : {}) });
    // Once more on the kept text: a form spread by more whitespace than the stream holds back is still whole here.
    return { ...r, output: secrets.redact(r.output) };
  };
}

/** The line a setup or check result starts with when the turn's secrets were kept from it. */
export const secretsWithheldLine = "[docent] the project's secrets were withheld: this turn starts from commits the agent made, not from the base ref\n";

/** A run whose results say that the project's secrets were withheld from it (not a failure). */
export function withheldNote(run: ReturnType<typeof redactedRun>, withheld: boolean): ReturnType<typeof redactedRun> {
  if (!withheld) return run;
  return async (command, opts) => {
    const r = await run(command, opts);
    return { ...r, output: secretsWithheldLine + r.output };
  };
}

type Run = (command: string) => Promise<CommandResult>;

/** Bytes of a command's output kept on the job and shown to the agent: the end, where failures are reported. */
export const keptOutputBytes = 4096;

async function runOne(kind: CheckResult['kind'], command: string, run: Run): Promise<CheckResult> {
  const r = await run(command);
  return { kind, command, exitCode: r.exitCode, durationMs: Math.round(r.durationMs), output: r.output, ...(r.stoppedBy ? { stoppedBy: r.stoppedBy } : {}) };
}

/** Setup commands in order, stopping at the first that fails: later ones usually depend on it. */
export async function runSetup(commands: string[], run: Run): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const command of commands) {
    results.push(await runOne('setup', command, run));
    if (results.at(-1)!.exitCode !== 0) break;
  }
  return results;
}

/** Every check command, even after one fails, so the agent and the pull request see all that is wrong. */
export async function runChecks(commands: string[], run: Run): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const command of commands) results.push(await runOne('check', command, run));
  return results;
}

export const failed = (results: CheckResult[]) => results.filter((r) => r.exitCode !== 0);
