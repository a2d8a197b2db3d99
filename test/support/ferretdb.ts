import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The FerretDB binary infra/stack.sh builds into the cache, for the module infra/ferretdb pins now. */
function ferretDbBinary(): string {
  const binary = execFileSync('bash', [path.join(__dirname, '../../infra/stack.sh'), 'path', 'ferretdb'], { encoding: 'utf8' }).trim();
  if (!existsSync(binary)) throw new Error(`no FerretDB build at ${binary}: run \`npm run stack install ferretdb\``);
  return binary;
}

export interface PrivateFerretDb {
  child: ChildProcess;
  /** The port it listens on: the one it was given by the OS (it listens on port 0 and says which it got). */
  port: number;
  stop(): Promise<void>;
}

/** A FerretDB of this test's own, with its data in a temporary folder and no users; never the shared one. */
export async function startPrivateFerretDb(timeoutMs = 20_000): Promise<PrivateFerretDb> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ferretdb-'));
  const args = ['--handler=sqlite', '--listen-addr=127.0.0.1:0', `--sqlite-url=file:${dataDir}/`, `--state-dir=${dataDir}`, '--telemetry=disable', '--debug-addr=-', '--log-level=INFO'];
  // GOGC as infra/stack.sh starts the shared one.
  const child = spawn(ferretDbBinary(), args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, GOGC: '400' } });
  let output = '';
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  };
  // FerretDB logs "Listening on TCP 127.0.0.1:<port>..." once its listener is bound.
  const port = await new Promise<number | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    child.stderr!.on('data', (d: Buffer) => {
      output += d.toString();
      const bound = /Listening on TCP 127\.0\.0\.1:(\d+)/.exec(output);
      if (bound) {
        clearTimeout(timer);
        resolve(Number(bound[1]));
      }
    });
    void exited.then(() => resolve(undefined));
  });
  if (!port) {
    await stop();
    throw new Error(`FerretDB did not start listening:\n${output}`);
  }
  return { child, port, stop };
}
