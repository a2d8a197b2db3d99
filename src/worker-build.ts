import os from 'node:os';
import type { Tracer } from '@opentelemetry/api';
import { Client as TemporalClient } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker, type ActivityInterceptorsFactory, type LogLevel } from '@temporalio/worker';
import { createActivities } from '../activities';
import { CloneHolds, holdingClones } from '../activities/agent-job/clone-holds';
import { sweepStaleWorkspaces } from '../activities/agent-job/workspace-sweep';
import { WorkspaceSweeper } from '../activities/agent-job/workspace-sweeper';
import { workspaceQueueName } from '../activities/agent-job/workspace-queue';
import { TASK_QUEUES, taskQueueName } from '../workflows/task-queues';
import { ensureReconcileSchedule } from './agent/reconcile-schedule';
import { JobTurnOwners, turnsByFairnessKey } from './jobs/fairness';
import type { Config } from './config';
import { deploymentIdentity } from './config/deployment';
import type { Logger } from './log';
import { type Embedder, embedderLoader } from './search/embedder';
import { createEsClient } from './search/es-client';
import { temporalConnectionOptions, temporalDataConverter } from './temporal/connection';
import { workersSharingOneWorkflowThread } from './temporal/shared-workflow-thread';
import { createMongo, type Mongo } from './store/mongo';
import { traced } from './tracing';

export interface WorkerSet {
  workers: Worker[];
  /** Resolves when every worker has stopped (after shutdown()). */
  run(): Promise<void>;
  shutdown(): void;
  close(): Promise<void>;
}

export interface BuildWorkersOptions {
  identity?: string;
  /** The worker's logger, for the activities' own lines (job outcomes). */
  log?: Logger;
  /** Traces each activity execution when set (DOCENT_OTEL_EXPORTER_OTLP_ENDPOINT); no interceptor at all otherwise. */
  tracer?: Tracer;
  /** Creates the job reconciler's schedule if it is missing (src/worker.ts; tests run the reconciler themselves). */
  reconcileSchedule?: boolean;
  /**
   * Removes clones of jobs that are no longer active before polling, then every DOCENT_WORKSPACE_SWEEP_MS those no
   * step here is using (src/worker.ts; tests share no workspace folder with it).
   */
  sweepWorkspaces?: boolean;
  /** More activity interceptors: tests hold an activity to look at what readers see between two steps. */
  activityInterceptors?: ActivityInterceptorsFactory[];
  /** The embedding model the activities use, instead of one loaded from the config (a test asks questions on it). */
  embedder?: () => Promise<Embedder>;
}

/** One span per activity execution, named by its type and carrying the workflow id (`agent-job-<jobId>`). */
function activitySpans(tracer: Tracer): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      execute: (input, next) =>
        traced(tracer, `activity ${ctx.info.activityType}`, { 'temporal.workflow_id': ctx.info.workflowExecution?.workflowId ?? '', 'temporal.activity_type': ctx.info.activityType }, () =>
          next(input),
        ),
    },
  });
}

const temporalLevel: Record<Config['logLevel'], LogLevel> = { debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR', silent: 'ERROR' };

/** Sends the Temporal SDK's own logs through docent's logger; call once per process, before buildWorkers. */
export function installTemporalRuntime(config: Config, log: Logger): void {
  // The SDK's info level narrates every webpack module; docent keeps it one level quieter than its own.
  const level = config.logLevel === 'info' ? 'WARN' : temporalLevel[config.logLevel];
  Runtime.install({
    logger: new DefaultLogger(level, ({ level: l, message, meta }) => {
      const method = l === 'ERROR' ? 'error' : l === 'WARN' ? 'warn' : l === 'DEBUG' || l === 'TRACE' ? 'debug' : 'info';
      log[method](meta ?? {}, message);
    }),
  });
}

/** Connects to Temporal and creates one worker per task queue, all sharing the same clients. */
export async function buildWorkers(config: Config, options: BuildWorkersOptions = {}): Promise<WorkerSet> {
  const identity = options.identity ?? `docent-worker@${os.hostname()}:${process.pid}`;
  const connection = await NativeConnection.connect(temporalConnectionOptions(config.temporal));
  const mongo: Mongo = createMongo(config.mongo.url, config.mongo.db, config.dependencyTimeoutMs, config.mongo);
  const es = createEsClient(config.elasticsearch, { maxRetries: 0, requestTimeout: 30_000 });
  // Activities start webhook deliveries over the worker's own connection.
  const temporal = new TemporalClient({ connection, namespace: config.temporal.namespace, dataConverter: temporalDataConverter(config.temporal) });
  // A model the caller passed in is the caller's to close.
  const ownEmbedder = options.embedder ? undefined : embedderLoader(config.embeddingModelDir, { threads: config.embeddingThreads, batch: config.embeddingBatch, cacheDir: config.embeddingCacheDir });
  const activities = createActivities({
    config,
    db: mongo.db,
    es,
    workerIdentity: identity,
    log: options.log,
    embedder: options.embedder ?? ownEmbedder,
    temporal,
  });
  if (options.sweepWorkspaces) {
    const swept = await sweepStaleWorkspaces(mongo.db, config.agent.workspaceDir, deploymentIdentity(config));
    if (swept.length) options.log?.info({ jobIds: swept }, 'removed the clones of jobs that are no longer active');
  }
  // The sweep never removes a clone a step of this worker is using (activities/agent-job/clone-holds.ts).
  const holds = new CloneHolds();
  const sweeper = options.sweepWorkspaces ? new WorkspaceSweeper(mongo.db, config.agent.workspaceDir, holds, deploymentIdentity(config)) : undefined;
  sweeper?.start(config.agent.workspaceSweepMs, (removed) =>
    removed instanceof Error
      ? options.log?.warn({ err: removed }, 'the workspace sweep failed; the next one tries again')
      : options.log?.info({ jobIds: removed }, 'removed the clones of jobs that have ended'),
  );
  if (options.reconcileSchedule) await ensureReconcileSchedule(temporal, config.temporal.taskQueuePrefix);
  // One bundle serves every queue: bundling is the slow part of a worker's start, so a prebuilt one is taken as is.
  const workflowBundle = config.workflowBundlePath
    ? { codePath: config.workflowBundlePath }
    : await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: Runtime.instance().logger });
  const common = {
    connection,
    namespace: config.temporal.namespace,
    activities,
    identity,
    dataConverter: temporalDataConverter(config.temporal),
    // A worker short of slots leaves the rest queued in Temporal, which dispatches projects fairly (src/jobs/fairness.ts).
    maxConcurrentActivityTaskExecutions: config.temporal.workerMaxActivities,
    maxHeartbeatThrottleInterval: config.temporal.heartbeatThrottleMs,
    stickyQueueScheduleToStartTimeout: config.temporal.stickyTimeoutMs,
    interceptors: {
      activity: [
        ...(options.tracer ? [activitySpans(options.tracer)] : []),
        // Slots taken, a step's waits inside the worker go by project in turn too (src/limits/project-turns.ts).
        ...(config.temporal.workerFairness ? [turnsByFairnessKey(new JobTurnOwners(temporal))] : []),
        holdingClones(holds),
        ...(options.activityInterceptors ?? []),
      ],
    },
  };
  // The queues' workflows share one workflow thread (src/temporal/shared-workflow-thread.ts).
  const QueueWorker = workersSharingOneWorkflowThread();
  const shared = TASK_QUEUES.map((q) => taskQueueName(config.temporal.taskQueuePrefix, q)).map((taskQueue) => QueueWorker.create({ ...common, taskQueue, workflowBundle }));
  // A turn's steps after its clone come through this worker's own queue (workflows/clone-route.ts): activities only.
  const own = Worker.create({ ...common, taskQueue: workspaceQueueName(config.temporal.taskQueuePrefix, config.agent.workspaceDir) });
  const workers = await Promise.all([...shared, own]);
  return {
    workers,
    async run() {
      await Promise.all(workers.map((w) => w.run()));
    },
    shutdown() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    },
    async close() {
      await sweeper?.stop();
      await Promise.allSettled([mongo.client.close(), es.close(), connection.close(), ownEmbedder?.close()]);
    },
  };
}
