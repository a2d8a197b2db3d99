// Runs one command in a fresh bwrap sandbox and enforces the wall-time, disk and cancellation limits from outside.
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { openBindSources } from './bind-sources';
import { bwrapArgs, launchCommand, SANDBOX_HOSTS, sandboxEnvironment, type ChildFds } from './bwrap-args';
import { createCommandCgroup, enterCgroupPrefix, type CommandCgroup } from './cgroup';
import { DEFAULT_MAX_INODES, diskUsage, watchDiskGrowth, type DiskUsage } from './disk-watch';
import { PROXY_ENV } from './egress/relay';
import { unavailable } from './errors';
import { hostTopLevel } from './host-layout';
import { DEFAULT_HEAD_BYTES, DEFAULT_TAIL_BYTES, OutputCapture } from './output';
import { validateSpec } from './spec';
import type { CommandResult, RunOptions, SandboxSpec } from './types';

/** Child fd numbers: 0-2 are stdio, then the status pipe, the bind sources and /etc/hosts's content (all below 10: dash redirects only single digits). */
const FD_STARTED = 3;
const FD_WORKSPACE = 4;
const FD_HOME = 5;
const FD_GIT = 6;
const FD_HOSTS = 7;

/** bwrap's own complaints are short; keep enough to explain a failure and no more. */
const MAX_DIAGNOSTIC_BYTES = 8192;
const SIGKILL_EXIT = 128 + osConstants.signals.SIGKILL;
const TIMEOUT_EXIT = 124;

type StopReason = NonNullable<CommandResult['stoppedBy']>;

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    // The group is setpriv/bwrap's (detached); --die-with-parent and the PID namespace take everything inside with it.
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const n = signal ? osConstants.signals[signal] : undefined;
  return n === undefined ? 1 : 128 + n;
}

/** How long 'close' (every stdio pipe at EOF) may lag behind the sandbox process's exit before the result is settled without it. */
const EXIT_GRACE_MS = 1000;

/** Runs `/bin/sh -c command` inside a fresh sandbox; never throws for the command's own failure (that is exitCode). Throws SandboxUnavailable if bwrap cannot start at all. */
export async function runInSandbox(spec: SandboxSpec, command: string, opts?: RunOptions): Promise<CommandResult> {
  validateSpec(spec);
  // The proxy variables win over the caller's: with network on they are the only way out anyway.
  const env = { ...sandboxEnvironment(opts?.env), ...(spec.network ? PROXY_ENV : {}) };
  if (typeof command !== 'string' || command.includes('\0')) throw new TypeError('sandbox command must be a string without NUL bytes');
  const capture = new OutputCapture(opts?.headBytes ?? DEFAULT_HEAD_BYTES, opts?.tailBytes ?? DEFAULT_TAIL_BYTES, opts?.redact?.());
  const signal = opts?.signal;
  const t0 = performance.now();
  if (signal?.aborted) return { exitCode: SIGKILL_EXIT, durationMs: performance.now() - t0, output: '', outputBytes: 0, stoppedBy: 'cancelled' };

  const topLevel = await hostTopLevel();
  const sources = await openBindSources(spec.workspace, spec.home);
  let child: ChildProcess;
  let baseline: DiskUsage;
  let cgroup: CommandCgroup | undefined;
  try {
    baseline = await diskUsage(spec.workspace);
    const fds: ChildFds = { started: FD_STARTED, workspace: FD_WORKSPACE, home: FD_HOME, git: sources.git ? FD_GIT : undefined, hosts: FD_HOSTS };
    const launch = launchCommand(spec, bwrapArgs(spec, fds, topLevel, command));
    if (spec.cgroup) cgroup = await createCommandCgroup(spec.cgroup, spec.limits);
    const [file, ...args] = cgroup ? [...enterCgroupPrefix(cgroup.procs), launch.file, ...launch.args] : [launch.file, ...launch.args];
    const stdio: Array<'ignore' | 'pipe' | number> = ['ignore', 'pipe', 'pipe', 'pipe', sources.workspace.fd, sources.home.fd];
    stdio.push(sources.git ? sources.git.fd : 'ignore', 'pipe');
    // Only the sandbox's own variables: bwrap's PID 1 inside keeps the environment it was started with (/proc/1/environ).
    child = spawn(file!, args, { stdio, env, detached: true, cwd: '/' });
    // A few bytes: the pipe takes them at once. EPIPE (bwrap gone before reading) shows as bwrap's own failure.
    const hosts = (child.stdio as ReadonlyArray<unknown>)[FD_HOSTS] as Writable;
    hosts.on('error', () => undefined);
    hosts.end(SANDBOX_HOSTS);
  } catch (err) {
    await sources.close();
    await cgroup?.remove();
    throw unavailable('cannot spawn bwrap', (err as Error).message);
  }
  // No await between spawn() and supervise(): a child that fails at once (a missing bwrap, setpriv's exec failing)
  // can exit, have its unread output discarded by Node and emit 'error' or 'close' within a few event-loop turns, and
  // a listener attached after them would never hear of it. spawn has dup'ed the descriptors into the child, so ours
  // can be closed meanwhile; Promise.all takes both promises now, so a quick rejection is never left unhandled.
  try {
    const [result] = await Promise.all([supervise(child, spec, capture, t0, baseline, signal, opts?.stdout), sources.close()]);
    return result;
  } finally {
    await cgroup?.remove();
  }
}

/** Enforces the limits on a just-spawned child and settles with its result. Must be called in the same tick as spawn(). */
function supervise(
  child: ChildProcess,
  spec: SandboxSpec,
  capture: OutputCapture,
  t0: number,
  baseline: DiskUsage,
  signal: AbortSignal | undefined,
  rawOut: NodeJS.WritableStream | undefined,
): Promise<CommandResult> {
  return new Promise<CommandResult>((resolve, reject) => {
    let stoppedBy: StopReason | undefined;
    let started = false;
    let spawnError: Error | undefined;
    let exitGrace: NodeJS.Timeout | undefined;
    let finished = false;
    const diagnostics: Buffer[] = [];
    let diagnosticBytes = 0;

    const stop = (reason: StopReason) => {
      if (stoppedBy || finished) return;
      stoppedBy = reason;
      killGroup(child);
    };
    const onAbort = () => stop('cancelled');
    const timer = setTimeout(() => stop('timeout'), spec.limits.timeoutMs);
    const maxGrowth = { bytes: spec.limits.maxDiskBytes, inodes: spec.limits.maxInodes ?? DEFAULT_MAX_INODES };
    const disk = watchDiskGrowth(spec.workspace, baseline, maxGrowth, () => stop('disk'));
    const unwatch = () => {
      clearTimeout(timer);
      disk.stop();
      signal?.removeEventListener('abort', onAbort);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    // It may have been aborted while the bind sources were being opened.
    if (signal?.aborted) stop('cancelled');

    const stdout = child.stdout!;
    const stderr = child.stderr!;
    const startedPipe = child.stdio[FD_STARTED] as Readable;
    // A read error on a pipe ends that stream (and 'close' still comes); unheard, it would crash the worker.
    for (const s of [stdout, stderr, startedPipe]) s.on('error', () => undefined);
    // Raw output (an archive) keeps its bytes and the pace of its reader; the caller ends that stream.
    if (rawOut) stdout.pipe(rawOut, { end: false });
    else stdout.on('data', (chunk: Buffer) => capture.write(chunk));
    stderr.on('data', (chunk: Buffer) => {
      // Before the wrapper's `exec 2>&1` this is bwrap or setpriv speaking; after it, nothing arrives here.
      if (diagnosticBytes >= MAX_DIAGNOSTIC_BYTES) return;
      diagnostics.push(chunk.subarray(0, MAX_DIAGNOSTIC_BYTES - diagnosticBytes));
      diagnosticBytes += chunk.length;
    });
    startedPipe.on('data', () => {
      started = true;
    });
    child.on('error', (err) => {
      spawnError ??= err;
      // 'close' may never come for a process that was never spawned.
      if (child.pid === undefined) finish(null, null);
    });
    child.on('exit', (code, sig) => {
      // It ended on its own or by our kill: no limit can apply any more.
      unwatch();
      // 'close' waits until every pipe is at EOF; normally that follows at once (the PID namespace dies with bwrap).
      // Should anything still hold a pipe open, its output is not worth a worker stuck here: settle without it.
      exitGrace = setTimeout(() => {
        killGroup(child);
        for (const s of [stdout, stderr, startedPipe]) s.destroy();
        finish(code, sig);
      }, EXIT_GRACE_MS);
    });
    child.on('close', (code, sig) => finish(code, sig));

    function finish(code: number | null, sig: NodeJS.Signals | null) {
      if (finished) return;
      finished = true;
      unwatch();
      clearTimeout(exitGrace);
      const durationMs = performance.now() - t0;
      if (!started && !stoppedBy) {
        const said = spawnError ? spawnError.message : Buffer.concat(diagnostics).toString('utf8');
        const how = spawnError ? '' : ` (exit ${exitCodeOf(code, sig)})`;
        reject(unavailable(`bwrap could not start the sandbox${how}`, said));
        return;
      }
      resolve({
        exitCode: stoppedBy === 'timeout' ? TIMEOUT_EXIT : exitCodeOf(code, sig),
        durationMs,
        output: capture.text(),
        outputBytes: capture.bytes,
        ...(stoppedBy ? { stoppedBy } : {}),
      });
    }
  });
}
