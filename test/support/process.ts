import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

export interface Started {
  child: ChildProcess;
  /** Everything the process printed so far, for failure messages. */
  output: string[];
  /**
   * Resolves with the first JSON log line that matches, printed before the call or after it, or rejects when the
   * process exits or the deadline passes.
   */
  waitForLog(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Sends a signal (to the whole process group for npm scripts) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

// The repository root, from test/support under Jest or from dist/test/support in a compiled benchmark.
const up = path.resolve(__dirname, '../..');
export const repositoryRoot = path.basename(up) === 'dist' ? path.dirname(up) : up;

/** The newest modification time of the TypeScript sources a compiled process runs. */
function newestSource(root: string): number {
  let newest = 0;
  for (const top of ['src', 'activities', 'workflows']) {
    if (!existsSync(path.join(root, top))) continue;
    for (const entry of readdirSync(path.join(root, top), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
    }
  }
  return newest;
}

/** Refuses a dist/ older than the sources: a file run alone after an edit would otherwise test the code before it. */
export function assertFreshBuild(file: string, root = repositoryRoot): void {
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` (npm test does)`);
  if (checkedBuilds.has(file)) return;
  if (statSync(file).mtimeMs < newestSource(root)) throw new Error(`${file} is older than the sources: run \`npm run build\` (npm test does)`);
  checkedBuilds.add(file);
}
const checkedBuilds = new Set<string>();

/** Runs a compiled entry point (dist/…) as its own process, the way `npm start` does. */
export function startProcess(entry: string, env: Record<string, string>): Started {
  const file = path.join(repositoryRoot, 'dist', entry);
  assertFreshBuild(file);
  return watch(spawn(process.execPath, [file], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }), false);
}

/** The log line a worker prints once it polls its task queues: ready for work. */
export const isWorkerPolling = (line: Record<string, unknown>) => line.msg === 'worker polling';

/** Starts a worker process (dist/src/worker.js) and resolves once it polls; one that never does is stopped, not left behind. */
export async function startWorkerProcess(env: Record<string, string>): Promise<Started> {
  const worker = startProcess('src/worker.js', env);
  try {
    await worker.waitForLog(isWorkerPolling);
    return worker;
  } catch (err) {
    await worker.stop('SIGKILL');
    throw err;
  }
}

/**
 * Runs `npm run <script>` as an operator would, in a process group of its own so that a signal reaches npm, its shell
 * and the node process it starts alike.
 */
export function startNpmScript(script: string, env: Record<string, string>): Started {
  assertFreshBuild(path.join(repositoryRoot, 'dist', 'src', 'main.js'));
  // npm finds node through PATH: the project's Node 24 first, as `npm run` itself arranges.
  const PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
  const child = spawn('npm', ['run', '--silent', script], { cwd: repositoryRoot, env: { ...process.env, ...env, PATH }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  return watch(child, true);
}

function watch(child: ChildProcess, group: boolean): Started {
  const output: string[] = [];
  const waiters = new Set<(line: string) => void>();
  for (const stream of [child.stdout!, child.stderr!]) {
    readline.createInterface({ input: stream }).on('line', (line) => {
      output.push(line);
      for (const w of waiters) w(line);
    });
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output,
    waitForLog(match, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const matching = (line: string) => {
          try {
            const parsed = JSON.parse(line) as Record<string, unknown>;
            return match(parsed) ? parsed : undefined;
          } catch {
            return undefined;
          }
        };
        // A process that started beside another may have printed the line while the test waited for the other.
        const seen = output.map(matching).find(Boolean);
        if (seen) return resolve(seen);
        const timer = setTimeout(() => done(new Error(`no matching log line within ${timeoutMs} ms:\n${output.join('\n')}`)), timeoutMs);
        const onLine = (line: string) => {
          const parsed = matching(line);
          if (parsed) done(undefined, parsed);
        };
        const done = (err?: Error, value?: Record<string, unknown>) => {
          clearTimeout(timer);
          waiters.delete(onLine);
          if (err) reject(err);
          else resolve(value!);
        };
        waiters.add(onLine);
        void exited.then((code) => done(new Error(`process exited (${code}) before the log line:\n${output.join('\n')}`)));
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        if (group) process.kill(-child.pid!, signal);
        else child.kill(signal);
      }
      return exited;
    },
  };
}
