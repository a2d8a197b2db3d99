import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import type { Client as TemporalClient } from '@temporalio/client';
import type { Db } from 'mongodb';
import { AutomationRunner } from '../src/automations/automation-runner';
import { AutomationStore } from '../src/automations/automation-store';
import type { Config } from '../src/config';
import { syncOnPush } from '../src/docs/sync-schedule';
import { AppError } from '../src/errors';
import type { ForgeRegistry } from '../src/forges/forge-registry';
import type { RepositoryGate } from '../src/forges/repository-gate';
import { GitHubDeliveryStore } from '../src/github/deliveries';
import { GitHubDeliveryHandler } from '../src/github/delivery-handler';
import { JobStarter } from '../src/jobs/job-starter';
import { JobSteering } from '../src/jobs/job-steering';
import type { JobLedger } from '../src/jobs/ledger';
import { RateLimits } from '../src/limits/rate-limits';
import { createLogger, type Logger } from '../src/log';
import { TenancyStore } from '../src/tenancy/store';
import type { Notifier } from '../src/webhooks/notify';
import type { GitHubDeliveryInput, GitHubDeliveryOutcome } from '../workflows/github-delivery-contract';

export interface GitHubDeliveryActivityDeps {
  config: Config;
  db: Db;
  ledger: JobLedger;
  temporal?: TemporalClient;
  log?: Logger;
  notifier?: Notifier;
  forges: ForgeRegistry;
  gate: RepositoryGate;
}

/** How often a step that waits on the forge says it is alive: a dead worker's step is retried after 20 s, not 2 min. */
const heartbeatMs = 5_000;

/** What a failure may say in Temporal's history and the deliveries log: its HTTP status, never a request's headers. */
function sayable(err: unknown): string {
  const status = (err as { status?: unknown }).status;
  return typeof status === 'number' ? `the forge answered HTTP ${status}` : 'an unexpected error (the worker log has it)';
}

/** The durable step of a GitHub delivery: the same handling the gateway's intake queued, with the worker's clients. */
export function createGitHubDeliveryActivities(deps: GitHubDeliveryActivityDeps) {
  const log = deps.log ?? createLogger('silent', 'worker');
  const { config, db, ledger } = deps;
  const tenancy = new TenancyStore(db, { cacheMs: config.lookupCacheMs });
  const handler =
    deps.temporal &&
    (() => {
      const temporal = deps.temporal;
      // Follow-ups from comments count against the project's hourly cap, as those sent through the API do.
      const starter = new JobStarter({ config, log, ledger, temporal, gate: deps.gate, quota: new RateLimits(db, config.limits) });
      const agentJobs = new JobSteering({ config, log, ledger, tenancy, temporal, starter });
      const store = new AutomationStore(db);
      return new GitHubDeliveryHandler({
        config,
        log,
        forges: deps.forges,
        syncDocsOnPush: (repository, ref, forgeId, mayStart) =>
          syncOnPush({ temporal, taskQueuePrefix: config.temporal.taskQueuePrefix, gitBaseUrl: config.github.gitUrl }, repository, ref, forgeId, mayStart),
        agentJobs,
        jobById: (jobId) => ledger.jobs.byId(jobId),
        turnOfDelivery: async (jobId, key) => (await ledger.turns.list(jobId)).find((t) => t.reply?.deliveryKey === key)?.turn ?? null,
        deliveries: new GitHubDeliveryStore(db),
        tenancy,
        automations: { store, runner: new AutomationRunner({ store, tenancy, starter, log, caps: config.automations, notifier: deps.notifier }) },
      });
    })();
  const mustHandler = () => {
    if (!handler) throw ApplicationFailure.nonRetryable('this worker has no Temporal client to start jobs with', 'DeliveryRefused');
    return handler;
  };
  return {
    async handleGitHubDelivery(input: GitHubDeliveryInput): Promise<GitHubDeliveryOutcome> {
      const alive = setInterval(() => heartbeat(), heartbeatMs);
      try {
        const handled = await mustHandler().handle(input);
        if (!handled) return { outcome: 'settled before' };
        return { outcome: handled.outcome, ...(handled.reason ? { reason: handled.reason } : {}), ...(handled.jobId ? { jobId: handled.jobId } : {}) };
      } catch (err) {
        if (err instanceof ApplicationFailure) throw err;
        // A refusal docent itself decided is final; anything else (the forge down, a timeout) is tried again.
        if (err instanceof AppError && err.code !== 'unavailable') throw ApplicationFailure.nonRetryable(err.message, 'DeliveryRefused');
        log.warn({ err, key: input.key, event: input.event }, 'could not handle a GitHub delivery; it is tried again');
        throw ApplicationFailure.retryable(err instanceof AppError ? err.message : sayable(err), 'DeliveryFailed');
      } finally {
        clearInterval(alive);
      }
    },

    async failGitHubDelivery(input: { key: string; reason: string }): Promise<void> {
      await mustHandler().fail(input.key, input.reason);
    },
  };
}
