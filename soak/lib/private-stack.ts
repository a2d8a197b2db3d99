// The soak's own Temporal, FerretDB and Elasticsearch, started by infra/stack.sh on other ports with their own run
// folder, so its restarts never touch the shared stack other work runs against.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repositoryRoot } from '../../test/support/process';

const run = promisify(execFile);

export type StackPart = 'temporal' | 'ferretdb' | 'elasticsearch';

export interface PrivateStack {
  /** The settings a gateway, worker or client needs to reach it (DOCENT_MONGO_URL, DOCENT_ES_*, DOCENT_TEMPORAL_ADDRESS). */
  env: Record<string, string>;
  start(parts?: StackPart[]): Promise<void>;
  stop(parts?: StackPart[]): Promise<void>;
  restart(part: StackPart): Promise<void>;
}

export interface StackPorts {
  temporal: number;
  temporalUi: number;
  mongo: number;
  es: number;
}

export const defaultPorts: StackPorts = { temporal: 17233, temporalUi: 18233, mongo: 27117, es: 9280 };

export async function privateStack(runDir: string, ports: StackPorts = defaultPorts): Promise<PrivateStack> {
  const stackEnv = {
    ...process.env,
    DOCENT_TEMPORAL_PORT: String(ports.temporal),
    DOCENT_TEMPORAL_UI_PORT: String(ports.temporalUi),
    DOCENT_MONGO_PORT: String(ports.mongo),
    DOCENT_ES_PORT: String(ports.es),
    DOCENT_RUN_DIR: path.join(runDir, 'stack'),
    DOCENT_ES_HEAP: process.env.DOCENT_ES_HEAP ?? '512m',
  };
  const script = path.join(repositoryRoot, 'infra/stack.sh');
  const stack = (...args: string[]) => run('bash', [script, ...args], { env: stackEnv, maxBuffer: 1 << 20 });
  const all: StackPart[] = ['temporal', 'ferretdb', 'elasticsearch'];
  const self: PrivateStack = {
    env: {},
    async start(parts = all) {
      await stack('start', ...parts);
      const printed = (await stack('env')).stdout;
      self.env = {
        ...Object.fromEntries(
          printed
            .split('\n')
            .filter(Boolean)
            .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
        ),
        DOCENT_TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}`,
      };
    },
    async stop(parts = all) {
      await stack('stop', ...parts);
    },
    async restart(part) {
      await stack('stop', part);
      await stack('start', part);
    },
  };
  return self;
}
