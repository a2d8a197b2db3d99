// One turn's egress: a proxy on a fresh Unix socket, its policy, and the bounded record of what went through it.
import { access, chown, constants, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { HOST_PATH } from '../bwrap-args';
import { unavailable } from '../errors';
import { loopbackEndpoints, type EgressAllowRule, type LoopbackEndpoint } from './allow-rules';
import { EgressPolicy } from './policy';
import { startEgressProxy } from './proxy';
import { EgressRecorder, type EgressSink } from './recorder';
import { RELAY_PORT } from './relay';

export { isAllowHostPattern, loopbackEndpoints, parseEgressAllowRule, type EgressAllowRule, type LoopbackEndpoint } from './allow-rules';
export { EgressRefused, getThroughEgress, type ProxiedAnswer } from './client';
export { EgressPolicy } from './policy';
export { startEgressProxy, type EgressRecord } from './proxy';
export { EgressRecorder, EGRESS_EVENTS_PER_TURN, type EgressSink } from './recorder';

export interface TurnEgressOptions {
  operatorAllow: readonly EgressAllowRule[];
  allowHosts: readonly string[];
  /** The uid the sandbox runs as, which must reach the socket (the worker is root). */
  owner?: { uid: number; gid: number };
  onEvent?: EgressSink;
}

export interface TurnEgress {
  socketPath: string;
  /** The operator-listed endpoints on the worker's loopback, for the sandbox to relay (SandboxSpec.egressLoopback). */
  loopback: LoopbackEndpoint[];
  /** Stops the proxy and writes the last events. */
  close(): Promise<void>;
}

/** Throws SandboxUnavailable (with the fix) when socat, the relay a sandbox with network on needs, is not installed. */
export async function requireRelay(): Promise<void> {
  for (const dir of HOST_PATH.split(':')) {
    if (
      await access(path.join(dir, 'socat'), constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return;
  }
  throw unavailable('network is on but socat, the loopback relay to the egress proxy, is missing', 'socat: not found');
}

export async function startTurnEgress(opts: TurnEgressOptions): Promise<TurnEgress> {
  await requireRelay();
  // A short path (sun_path holds 107 bytes), private to the sandbox's uid and the worker.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'docent-egress-'));
  if (opts.owner) await chown(dir, opts.owner.uid, opts.owner.gid);
  const recorder = new EgressRecorder(opts.onEvent ?? (async () => undefined));
  try {
    const proxy = await startEgressProxy(path.join(dir, 'proxy.sock'), new EgressPolicy({ operatorAllow: opts.operatorAllow, allowHosts: opts.allowHosts }), (r) => recorder.record(r));
    return {
      socketPath: proxy.socketPath,
      loopback: loopbackEndpoints(opts.operatorAllow).filter((e) => e.port !== RELAY_PORT),
      async close() {
        await proxy.close();
        await recorder.flush();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
