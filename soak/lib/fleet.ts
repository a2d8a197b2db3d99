// The soak's gateways and workers: compiled entry points in their own processes (test/support/process.ts), each
// restartable after a kill, with its output kept in the run folder.
import { createWriteStream, readFileSync } from 'node:fs';
import path from 'node:path';
import { isWorkerPolling, startProcess, type Started } from '../../test/support/process';

export interface Member {
  name: string;
  role: 'gateway' | 'worker';
  /** The running process; undefined while it is down. */
  current?: Started;
  /** The gateway's HTTP base URL (it listens on a new port after each restart). */
  url?: string;
  start(): Promise<void>;
  /** Sends the signal and waits for the exit (SIGKILL) or returns at once (SIGSTOP, SIGCONT). */
  signal(sig: NodeJS.Signals): Promise<void>;
  /** Resident memory of the node process now, from /proc. */
  rssBytes(): number | undefined;
}

/** Polls GET /readyz until the gateway reaches all its dependencies (a loaded machine's FerretDB can take a while). */
async function untilReady(url: string, ms = 180_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
    if (res?.status === 200) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`${url} not ready after ${ms} ms`);
}

export function member(runDir: string, name: string, role: Member['role'], env: () => Record<string, string>): Member {
  const log = createWriteStream(path.join(runDir, `${name}.log`), { flags: 'a' });
  const m: Member = {
    name,
    role,
    async start() {
      const p = startProcess(role === 'gateway' ? 'src/main.js' : 'src/worker.js', env());
      for (const s of [p.child.stdout!, p.child.stderr!]) s.on('data', (d: Buffer) => log.write(d));
      m.current = p;
      if (role === 'gateway') {
        const l = await p.waitForLog((x) => typeof x.httpPort === 'number', 180_000);
        m.url = `http://127.0.0.1:${l.httpPort}`;
        await untilReady(m.url);
      } else await p.waitForLog(isWorkerPolling, 300_000);
    },
    async signal(sig) {
      const p = m.current;
      if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
      if (sig === 'SIGKILL' || sig === 'SIGTERM') {
        await p.stop(sig);
        m.current = undefined;
        m.url = undefined;
      } else p.child.kill(sig);
    },
    rssBytes() {
      const pid = m.current?.child.pid;
      if (!pid) return undefined;
      try {
        const pages = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
        return pages * 4096;
      } catch {
        return undefined;
      }
    },
  };
  return m;
}
