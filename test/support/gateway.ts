import { createDeps, closeDeps, type Deps } from '../../src/deps';
import { createLogger } from '../../src/log';
import { build } from '../../src/server';
import { ensureIndexes } from '../../src/store/mongo';
import { testConfig } from './config';

export interface RunningGateway {
  deps: Deps;
  /** Base URL of the HTTP/1.1 listener. */
  url: string;
  /** Base URL of the h2c listener. */
  h2Url: string;
  stop(): Promise<void>;
}

/** Starts the real gateway in-process on free ports against the local stack, with a fresh database. */
export async function startGateway(overrides: Record<string, string> = {}): Promise<RunningGateway> {
  const config = testConfig(overrides);
  const deps = createDeps(config, createLogger(config.logLevel, 'test-gateway'));
  await ensureIndexes(deps.mongo.db).catch(() => undefined); // a test may point MongoDB at nothing on purpose
  const gateway = build(deps);
  const { httpPort, grpcPort } = await gateway.listen();
  return {
    deps,
    url: `http://127.0.0.1:${httpPort}`,
    h2Url: `http://127.0.0.1:${grpcPort}`,
    async stop() {
      await gateway.close();
      await deps.mongo.db.dropDatabase().catch(() => undefined);
      await closeDeps(deps);
    },
  };
}
