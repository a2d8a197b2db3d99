import { loadConfig } from './config';
import { closeDeps, createDeps } from './deps';
import { createLogger } from './log';
import { build } from './server';
import { ensureIndexes } from './store/mongo';
import { startTracing } from './tracing';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'gateway');
  const tracing = await startTracing(config.otlpEndpoint, 'docent-gateway');
  const deps = { ...createDeps(config, log), tracer: tracing.tracer };
  // Index creation waits for MongoDB; the gateway serves (and reports not ready) meanwhile.
  ensureIndexes(deps.mongo.db).catch((err) => log.warn({ err }, 'could not create MongoDB indexes yet; will retry at next start'));
  const gateway = await build(deps);
  const { httpPort, grpcPort } = await gateway.listen();
  const github = config.github;
  const lends = github.app ? 'GitHub App' : github.token ? 'GitHub token' : undefined;
  // Who may borrow the deployment's credential is the operator's choice, said once where every operator looks.
  log.info(
    { sharedOrgs: lends ? github.sharedOrgs : '*' },
    lends
      ? `the deployment's ${lends} serves the organizations ${github.sharedOrgs.join(', ')} (DOCENT_GITHUB_SHARED_ORGS); others reach code through their own forge connections`
      : 'no deployment GitHub credential: organizations reach private code through their own forge connections',
  );
  log.info({ httpPort, grpcPort }, `gateway listening: http://${config.host}:${httpPort} (REST, Connect, gRPC-web), h2c ${config.host}:${grpcPort} (gRPC)`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    await gateway.close();
    await closeDeps(deps);
    await tracing.shutdown();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
