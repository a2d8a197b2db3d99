import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A port nothing listens on right now (the OS picked it free; it is released at once). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** The FerretDB binary infra/stack.sh builds into the cache, for the module infra/ferretdb pins now. */
function ferretDbBinary(): string {
  const binary = execFileSync('bash', [path.join(__dirname, '../../infra/stack.sh'), 'path', 'ferretdb'], { encoding: 'utf8' }).trim();
  if (!existsSync(binary)) throw new Error(`no FerretDB build at ${binary}: run \`npm run stack install ferretdb\``);
  return binary;
}

export interface PrivateFerretDb {
  child: ChildProcess;
  stop(): Promise<void>;
}

/** A FerretDB of this test's own on `port`, with its data in a temporary folder and no users; never the shared one. */
export async function startPrivateFerretDb(port: number, timeoutMs = 20_000): Promise<PrivateFerretDb> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ferretdb-'));
  const args = ['--handler=sqlite', `--listen-addr=127.0.0.1:${port}`, `--sqlite-url=file:${dataDir}/`, `--state-dir=${dataDir}`, '--telemetry=disable', '--debug-addr=-', '--log-level=WARN'];
  const child = spawn(ferretDbBinary(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (open) return { child, stop };
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`FerretDB did not listen on ${port}:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
