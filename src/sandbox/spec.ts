// Checks a SandboxSpec before anything is spawned: a malformed spec is the caller's bug, not the sandbox being unavailable.
import path from 'node:path';
import { RELAY_PORT } from './egress/relay';
import type { SandboxSpec } from './types';

/** Where the sandbox mounts its own things; a read-only path there would shadow them or create mount points in the host workspace. */
const RESERVED = ['/workspace', '/home/sandbox', '/proc', '/dev', '/context'];

function positiveInteger(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`sandbox limits.${name} must be a positive integer, got ${value}`);
}

function absolute(name: string, p: string): void {
  if (typeof p !== 'string' || p.includes('\0') || !path.isAbsolute(p) || path.resolve(p) !== (p.length > 1 ? p.replace(/\/+$/, '') : p)) {
    throw new TypeError(`sandbox ${name} must be a normalized absolute path, got ${JSON.stringify(p)}`);
  }
}

export function validateSpec(spec: SandboxSpec): void {
  absolute('workspace', spec.workspace);
  absolute('home', spec.home);
  if (spec.context !== undefined) absolute('context', spec.context);
  for (const p of spec.readOnlyPaths ?? []) {
    absolute('readOnlyPaths entry', p);
    if (p === '/' || RESERVED.some((r) => p === r || p.startsWith(`${r}/`))) throw new TypeError(`sandbox readOnlyPaths entry ${p} would shadow a sandbox mount`);
  }
  const l = spec.limits;
  positiveInteger('timeoutMs', l.timeoutMs);
  positiveInteger('memoryBytes', l.memoryBytes);
  positiveInteger('maxProcesses', l.maxProcesses);
  positiveInteger('maxFileBytes', l.maxFileBytes);
  positiveInteger('maxDiskBytes', l.maxDiskBytes);
  positiveInteger('tmpBytes', l.tmpBytes);
  if (l.shmBytes !== undefined) positiveInteger('shmBytes', l.shmBytes);
  if (l.maxInodes !== undefined) positiveInteger('maxInodes', l.maxInodes);
  if (l.cpus !== undefined && !(Number.isFinite(l.cpus) && l.cpus > 0)) throw new RangeError(`sandbox limits.cpus must be a positive number, got ${l.cpus}`);
  if (spec.network) {
    if (spec.egressSocket === undefined) throw new TypeError("sandbox network needs egressSocket, the egress proxy's Unix socket");
    absolute('egressSocket', spec.egressSocket);
    // They become words of the relay's shell script: only these hosts and a TCP port other than the proxy's relay.
    for (const e of spec.egressLoopback ?? []) {
      if (!['127.0.0.1', 'localhost'].includes(e.host) || !Number.isInteger(e.port) || e.port < 1 || e.port > 65535 || e.port === RELAY_PORT) {
        throw new TypeError(`sandbox egressLoopback entry ${JSON.stringify(e)} is not 127.0.0.1 or localhost on a free port`);
      }
    }
  }
  if (spec.cgroup !== undefined) absolute('cgroup', spec.cgroup);
  if (spec.runAs) {
    for (const [k, v] of Object.entries(spec.runAs)) {
      // uid/gid 0 would defeat the point of runAs (RLIMIT_NPROC is not enforced for real uid 0).
      if (!Number.isSafeInteger(v) || v <= 0 || v >= 2 ** 32 - 1) throw new RangeError(`sandbox runAs.${k} must be a non-root id, got ${v}`);
    }
  }
  if (spec.bwrapPath !== undefined && (typeof spec.bwrapPath !== 'string' || spec.bwrapPath === '')) throw new TypeError('sandbox bwrapPath must be a non-empty string');
}
