// The bwrap command line for one sandboxed command: deny by default, then allow exactly what a build needs.
import { relayScript, SANDBOX_PROXY_SOCKET } from './egress/relay';
import type { TopLevelEntry } from './host-layout';
import type { SandboxSpec } from './types';

/** PATH for bwrap/setpriv themselves and for the command inside. */
export const HOST_PATH = '/usr/local/bin:/usr/bin:/bin';
export const SANDBOX_ENV: Readonly<Record<string, string>> = { PATH: HOST_PATH, HOME: '/home/sandbox', LANG: 'C.UTF-8', TMPDIR: '/tmp', CI: 'true' };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/**
 * The whole environment bwrap is spawned with, and so what the command sees: the fixed variables plus `extra`.
 * Passed as the spawn's environment, never as --setenv arguments, so values (setup secrets) never show in a host
 * process listing; bwrap's PID 1 inside keeps this same environment, so /proc/1/environ holds nothing more.
 */
export function sandboxEnvironment(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  for (const [name, value] of Object.entries(extra)) {
    if (!ENV_NAME.test(name)) throw new TypeError(`sandbox environment variable name ${JSON.stringify(name)} is not a valid name`);
    if (name in SANDBOX_ENV) throw new TypeError(`sandbox environment variable ${name} is set by the sandbox itself`);
    if (typeof value !== 'string' || value.includes('\0')) throw new TypeError(`sandbox environment variable ${name} must be a string without NUL bytes`);
  }
  return { ...SANDBOX_ENV, ...extra };
}

export const WORKSPACE = '/workspace';
export const HOME = '/home/sandbox';
export const CONTEXT = '/context';

/** World-readable /etc files that dynamic linking, user lookups and time zones need; nothing secret. */
const ETC_ALWAYS = ['passwd', 'group', 'nsswitch.conf', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'alternatives', 'localtime'];
/** Only useful with a network: TLS trust for connections tunnelled through the proxy. No resolv.conf: the proxy resolves names. */
const ETC_NETWORK = ['ssl/certs', 'ssl/openssl.cnf', 'ca-certificates', 'ca-certificates.conf'];
/** /dev/shm when the limits do not say: POSIX shared memory for builds, bounded like /tmp. */
export const DEFAULT_SHM_BYTES = 64 * 1024 * 1024;

/** The sandbox's own /etc/hosts: `localhost` resolves (test servers listen on it) and names nothing of the host's. */
export const SANDBOX_HOSTS = '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\tsandbox\n';

/** File descriptor numbers as the child (setpriv/bwrap) sees them. */
export interface ChildFds {
  /** Read end of a pipe carrying SANDBOX_HOSTS, which bwrap copies to /etc/hosts. */
  hosts: number;
  /** Write end the wrapper shell writes one byte to once bwrap has finished setting up. */
  started: number;
  workspace: number;
  home: number;
  /** The workspace's .git directory, when it has one. */
  git?: number;
}

/**
 * Inside the sandbox, before the untrusted command: say "started" on the status fd, close it so the command
 * cannot write there, and send stderr to stdout so the two interleave exactly as produced.
 */
function wrapperScript(startedFd: number): string {
  return `printf . >&${startedFd}; exec ${startedFd}>&- 2>&1; exec "$@"`;
}

export function bwrapArgs(spec: SandboxSpec, fds: ChildFds, topLevel: TopLevelEntry[], command: string): string[] {
  const { limits } = spec;
  // Always a network namespace of its own (only loopback): with network on, the way out is the proxy's socket.
  const a: string[] = ['--unshare-all', '--unshare-user', '--disable-userns'];
  a.push('--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--hostname', 'sandbox');

  a.push('--ro-bind', '/usr', '/usr');
  for (const e of topLevel) {
    if (e.kind === 'symlink') a.push('--symlink', e.target, e.path);
    else a.push('--ro-bind', e.path, e.path);
  }
  // -try: a host without one of these files simply lacks it in the sandbox too.
  for (const f of [...ETC_ALWAYS, ...(spec.network ? ETC_NETWORK : [])]) a.push('--ro-bind-try', `/etc/${f}`, `/etc/${f}`);
  a.push('--perms', '0644', '--ro-bind-data', String(fds.hosts), '/etc/hosts');

  a.push('--proc', '/proc', '--dev', '/dev');
  a.push('--perms', '1777', '--size', String(limits.shmBytes ?? DEFAULT_SHM_BYTES), '--tmpfs', '/dev/shm');
  // The device nodes stay usable (a read-only mount does not stop writes to /dev/null); nothing new can be created there.
  a.push('--remount-ro', '/dev');
  a.push('--perms', '1777', '--size', String(limits.tmpBytes), '--tmpfs', '/tmp');
  if (spec.network) a.push('--ro-bind', egressSocketOf(spec), SANDBOX_PROXY_SOCKET);

  a.push('--bind-fd', String(fds.workspace), WORKSPACE);
  // After the workspace bind, so it lands on top: the worker's own git later reads this config and these hooks.
  if (fds.git !== undefined) a.push('--ro-bind-fd', String(fds.git), `${WORKSPACE}/.git`);
  a.push('--bind-fd', String(fds.home), HOME);
  for (const p of spec.readOnlyPaths ?? []) a.push('--ro-bind', p, p);
  if (spec.context) a.push('--ro-bind', spec.context, CONTEXT);
  // Last, once every mount point exists: the root tmpfs (/, /etc, /home) read-only; the mounts on it keep their own mode.
  a.push('--remount-ro', '/');
  a.push('--chdir', WORKSPACE);

  a.push('--', '/bin/sh', '-c', wrapperScript(fds.started), 'docent-sandbox');
  a.push('/usr/bin/prlimit', `--nproc=${limits.maxProcesses}`, `--data=${limits.memoryBytes}`, `--fsize=${limits.maxFileBytes}`, '--core=0', '--');
  // The relay runs under the same limits as the command: its forks count against the same process cap.
  if (spec.network) a.push('/bin/sh', '-c', relayScript(spec.egressLoopback), 'docent-relay', command);
  else a.push('/bin/sh', '-c', command);
  return a;
}

function egressSocketOf(spec: SandboxSpec): string {
  if (!spec.egressSocket) throw new TypeError("sandbox network needs egressSocket, the egress proxy's Unix socket");
  return spec.egressSocket;
}

/** The executable and arguments to spawn: bwrap itself, or bwrap through setpriv when dropping from root. */
export function launchCommand(spec: SandboxSpec, bwrap: string[]): { file: string; args: string[] } {
  const bwrapPath = spec.bwrapPath ?? 'bwrap';
  if (!spec.runAs) return { file: bwrapPath, args: bwrap };
  const { uid, gid } = spec.runAs;
  return { file: 'setpriv', args: [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--', bwrapPath, ...bwrap] };
}
