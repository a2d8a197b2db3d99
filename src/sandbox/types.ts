// The sandbox's public shapes: what a caller asks for and what one command gives back.
import type { LoopbackEndpoint } from './egress/allow-rules';

export interface SandboxLimits {
  /** Wall time; then the whole sandbox is killed. */
  timeoutMs: number;
  /** Per-process data limit (RLIMIT_DATA), in bytes. */
  memoryBytes: number;
  /** Most processes/threads inside the sandbox (RLIMIT_NPROC, set inside the sandbox's own user namespace). */
  maxProcesses: number;
  /** Largest file a command may write (RLIMIT_FSIZE), in bytes. */
  maxFileBytes: number;
  /** Most the used bytes of the workspace's filesystem may grow during one command (checked by polling statfs); then the sandbox is killed. */
  maxDiskBytes: number;
  /** Size of the private /tmp (tmpfs --size). */
  tmpBytes: number;
  /** Size of /dev/shm (tmpfs --size); default 64 MiB. */
  shmBytes?: number;
  /** Most the used inodes of the workspace's filesystem may grow during one command; then the sandbox is killed (stoppedBy 'disk'). Default 200,000. */
  maxInodes?: number;
  /** CPU time per wall second, in cores (cgroup cpu.max), when the command runs in a cgroup; default: no cap. */
  cpus?: number;
}

export interface SandboxSpec {
  /** Absolute path of the repository clone: bound read-write at /workspace (the command's cwd). If it holds a `.git` directory, that is bound read-only over /workspace/.git. */
  workspace: string;
  /** Absolute path of an existing directory bound read-write as HOME (/home/sandbox); the caller creates it empty. */
  home: string;
  /**
   * Every command has a network namespace of its own with only loopback. false: nothing more. true: the egress
   * proxy's Unix socket (egressSocket) is bound in, a loopback relay on 127.0.0.1:3128 leads to it, the proxy
   * variables point there, and the CA certificates are readable. No DNS resolver: the proxy resolves names.
   */
  network: boolean;
  /** Host path of the egress proxy's Unix socket (src/sandbox/egress/proxy.ts); required when network is true. */
  egressSocket?: string;
  /**
   * Operator-listed endpoints on the worker's own loopback (src/sandbox/egress/allow-rules.ts `loopbackEndpoints`):
   * each listens on the same port of the sandbox's loopback and is tunnelled through the proxy, which checks it.
   */
  egressLoopback?: readonly LoopbackEndpoint[];
  /** A cgroup v2 directory with memory, cpu and pids delegated: each command runs in a child of it with memory.max, cpu.max and pids.max set (src/sandbox/cgroup.ts). */
  cgroup?: string;
  limits: SandboxLimits;
  /** When the calling process is root: run bwrap as this unprivileged uid/gid (through `setpriv --reuid --regid --clear-groups`), because RLIMIT_NPROC is not enforced for real uid 0. Undefined: run as the current user. The caller makes workspace and home writable by that uid (chown); the runner does not chown. */
  runAs?: { uid: number; gid: number };
  /** Extra host paths bound read-only at the same path (toolchains such as /opt/node). */
  readOnlyPaths?: string[];
  /** Absolute path of a folder bound read-only at /context: the job's context repositories, which commands may read and never change. */
  context?: string;
  /** The bwrap executable (default 'bwrap', found on PATH). */
  bwrapPath?: string;
}

export interface CommandResult {
  /** The shell's exit code; 128+signal when killed by a signal; 124 when stopped at the wall-time limit (as timeout(1) does). */
  exitCode: number;
  durationMs: number;
  /** stdout and stderr interleaved as produced, capped: the first headBytes and the last tailBytes, with a line "[... N bytes omitted ...]" between them when anything was cut. Valid UTF-8 (cut points must not split a character). */
  output: string;
  /** How many bytes the command wrote in total (as redacted, when RunOptions.redact is given). */
  outputBytes: number;
  /** Set when docent stopped the command rather than the command ending by itself. */
  stoppedBy?: 'timeout' | 'disk' | 'cancelled';
}

/** Per-command options of runInSandbox. */
export interface RunOptions {
  signal?: AbortSignal;
  headBytes?: number;
  tailBytes?: number;
  /** Variables added to the command's environment (setup secrets, proxy settings); names the sandbox sets itself are refused. */
  env?: Readonly<Record<string, string>>;
  /** Makes the filter the output passes through before it is cut to head and tail (secret redaction); one per run. */
  redact?: () => OutputFilter;
  /** Where the command's raw output goes instead of the capture (an archive streamed out); the result's output is then empty. */
  stdout?: NodeJS.WritableStream;
}

/** Rewrites a command's output on its way to the capture: `write` and `end` return what is kept instead. */
export interface OutputFilter {
  write(chunk: Buffer): Buffer;
  end(): Buffer;
}
