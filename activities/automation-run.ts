import type { Client as EsClient } from '@elastic/elasticsearch';
import type { Client as TemporalClient } from '@temporalio/client';
import type { Db } from 'mongodb';
import { AutomationRunner } from '../src/automations/automation-runner';
import { AutomationStore } from '../src/automations/automation-store';
import { checkUnansweredQuestions, isGapAutomation } from '../src/automations/gap-trigger';
import type { Config } from '../src/config';
import type { JobAdmission } from '../src/jobs/admission';
import { JobStarter } from '../src/jobs/job-starter';
import type { RepositoryGate } from '../src/forges/repository-gate';
import { createLogger, type Logger } from '../src/log';
import type { Embedder } from '../src/search/embedder';
import { TenancyStore } from '../src/tenancy/store';
import type { Notifier } from '../src/webhooks/notify';
import type { AutomationRunOutcome, StartAutomationRunInput } from '../workflows/automation-run-contract';

export interface AutomationActivityDeps {
  config: Config;
  db: Db;
  ledger: JobAdmission;
  temporal?: TemporalClient;
  log?: Logger;
  notifier?: Notifier;
  /** Where an unanswered_questions automation finds its questions and their passages. */
  es: EsClient;
  embedder?: () => Promise<Embedder>;
  /** The repository gate a scheduled run's job goes through, as one the gateway starts does. */
  gate: RepositoryGate;
}

/** A schedule's run of an automation: the same runner, and the same job start, as a manual trigger in the gateway. */
export function createAutomationActivities(deps: AutomationActivityDeps) {
  const log = deps.log ?? createLogger('silent', 'worker');
  const store = new AutomationStore(deps.db);
  const tenancy = new TenancyStore(deps.db, { cacheMs: deps.config.lookupCacheMs });
  const gaps = { db: deps.db, es: deps.es, indexPrefix: deps.config.elasticsearch.indexPrefix, embedder: deps.embedder };
  const runner =
    deps.temporal &&
    new AutomationRunner({
      store,
      tenancy,
      starter: new JobStarter({ config: deps.config, log, ledger: deps.ledger, temporal: deps.temporal, gate: deps.gate }),
      log,
      caps: deps.config.automations,
      notifier: deps.notifier,
    });
  return {
    async startAutomationRun(input: StartAutomationRunInput): Promise<AutomationRunOutcome> {
      if (!runner) throw new Error('this worker has no Temporal client to start jobs with');
      const automation = await store.byId(input.automationId);
      // Deleted meanwhile: its schedule went with it, and nothing is left to record the run on.
      if (!automation) return { runId: '', status: 'refused', reason: 'the automation no longer exists' };
      if (isGapAutomation(automation)) {
        const { check, run } = await checkUnansweredQuestions({ store, runner, tenancy, gaps }, automation, input.eventKey);
        if (!run) return { runId: '', status: 'skipped', reason: check.reason ?? 'below the threshold' };
        return { runId: run._id, status: run.status, ...(run.jobId ? { jobId: run.jobId } : {}), ...(run.reason ? { reason: run.reason } : {}) };
      }
      const run = await runner.run(automation, { origin: 'schedule', eventKey: input.eventKey });
      return { runId: run._id, status: run.status, ...(run.jobId ? { jobId: run.jobId } : {}), ...(run.reason ? { reason: run.reason } : {}) };
    },
  };
}
