import { createDeps, closeDeps, settleWrites, type Deps } from '../../src/deps';
import { createLogger } from '../../src/log';
import type { Route } from '../../src/rest/router';
import { restRoutes } from '../../src/rest/routes';
import { build } from '../../src/server';
import { ensureIndexes } from '../../src/store/mongo';
import { testConfig } from './config';

export interface RunningGateway {
  deps: Deps;
  /** Base URL of the HTTP/1.1 listener. */
  url: string;
  /** Base URL of the h2c listener. */
  h2Url: string;
  /** Stops the gateway and drops its database (`keepDatabase`: another gateway or the test still reads it). */
  stop(options?: { keepDatabase?: boolean }): Promise<void>;
  /** Connections the h2c listener holds open now: a client gone should leave none behind. */
  openH2cConnections(): Promise<number>;
}

export interface GatewayOptions {
  /**
   * Routes registered only in this test, after the real ones. They stand in for endpoints whose keys other tests
   * check, so they are served as `auth: 'none'` whatever they declare; their handlers get no caller.
   */
  extraRoutes?: (deps: Deps) => Route[];
  /** Where the gateway's log lines go (default: stdout). */
  logDestination?: NodeJS.WritableStream;
  /** Changes the clients before the server is built (benchmarks swap in variants, e.g. without rate limits). */
  prepare?: (deps: Deps) => Deps;
  /** The test points MongoDB at nothing on purpose: no indexes are made (any other failure to make them fails the test). */
  mongoDown?: boolean;
}

/** Starts the real gateway in-process on free ports against the local stack, with a fresh database. */
export async function startGateway(overrides: Record<string, string> = {}, options: GatewayOptions = {}): Promise<RunningGateway> {
  const config = testConfig(overrides);
  const created = createDeps(config, createLogger(config.logLevel, 'test-gateway', options.logDestination));
  const deps = options.prepare ? options.prepare(created) : created;
  if (!options.mongoDown) await ensureIndexes(deps.mongo.db);
  const extra = (options.extraRoutes?.(deps) ?? []).map((r): Route => ({ ...r, auth: 'none' }));
  const gateway = await build(deps, [...restRoutes(deps), ...extra]);
  const { httpPort, grpcPort } = await gateway.listen();
  return {
    deps,
    url: `http://127.0.0.1:${httpPort}`,
    h2Url: `http://127.0.0.1:${grpcPort}`,
    openH2cConnections: () => new Promise<number>((resolve, reject) => gateway.http2.getConnections((err, n) => (err ? reject(err) : resolve(n)))),
    async stop({ keepDatabase = false } = {}) {
      await gateway.close();
      if (!keepDatabase) {
        // Writes still running while FerretDB drops their database crash it (SIGBUS in SQLite's WAL): they finish first.
        await settleWrites(deps);
        await deps.mongo.db.dropDatabase().catch(() => undefined);
      }
      await closeDeps(deps);
    },
  };
}
