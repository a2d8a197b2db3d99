import { probeWorkerSandbox } from '../activities/agent-job/sandbox-workspace';
import { requireArchiveTools } from '../activities/agent-job/setup-archive';
import { loadConfig } from './config';
import { createLogger } from './log';
import { startTracing } from './tracing';
import { buildWorkers, installTemporalRuntime } from './worker-build';

// The Temporal SDK stops the workers on SIGINT/SIGTERM; activities in flight get their grace period.
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'worker');
  installTemporalRuntime(config, log);
  // Repository code runs only in the sandbox: a worker that cannot make one does not take jobs.
  if (config.sandbox) {
    const cgroup = await probeWorkerSandbox(config.sandbox, config.agent.workspaceDir);
    if (cgroup.dir) log.info({ cgroup: cgroup.dir }, cgroup.message);
    else log.warn(cgroup.message);
    if (config.agent.setupCache) await requireArchiveTools();
  } else log.warn('DOCENT_SANDBOX=off: agent jobs get no run_command tool, and projects with checks fail their turns');
  const tracing = await startTracing(config.otlpEndpoint, 'docent-worker');
  const set = await buildWorkers(config, { tracer: tracing.tracer, log, reconcileSchedule: config.agent.reconciler, sweepWorkspaces: true });
  log.info({ taskQueues: set.workers.map((w) => w.options.taskQueue), temporal: config.temporal.address }, 'worker polling');
  try {
    await set.run();
  } finally {
    await set.close();
    await tracing.shutdown();
  }
  log.info('worker stopped');
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
