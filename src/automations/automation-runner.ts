// One run of an automation, wherever its event arrives: the gateway (a manual trigger) or the worker (a schedule's
// action, activities/automation-run.ts). The event's key makes a repeated event one run and, through the job's
// idempotency key, one job.
import { AppError } from '../errors';
import type { JobIssue, JobOrigin } from '../jobs/job';
import type { ContextRepository } from '../../workflows/agent-job-contract';
import type { JobStarter } from '../jobs/job-starter';
import type { Logger } from '../log';
import type { TenancyStore } from '../tenancy/store';
import type { AutomationDoc, AutomationRunDoc } from './automation';
import { type AutomationStore, startOfUtcDay } from './automation-store';

export interface AutomationRunnerDeps {
  store: AutomationStore;
  tenancy: TenancyStore;
  starter: JobStarter;
  log: Logger;
  /** The daily caps (DOCENT_AUTOMATION_RUNS_PER_DAY, DOCENT_AUTOMATION_RUNS_PER_PROJECT_DAY). */
  caps: { runsPerAutomationDay: number; runsPerProjectDay: number };
}

/** One event an automation answers; a GitHub event brings its own instruction, context repositories and issue. */
export interface RunEvent {
  origin: JobOrigin;
  eventKey: string;
  /** The automation's instruction filled with the event (src/automations/event-instruction.ts); absent: the instruction as written. */
  instruction?: string;
  /** Read-only repositories the event adds to the automation's (a merged pull request's code repository). */
  contextRepositories?: ContextRepository[];
  /** The issue the job answers: its pull request says `Fixes #N` and the issue hears of it. */
  issue?: JobIssue;
}

/** The automation's context repositories and the event's, each named once, at most 10. */
function contextOf(automation: AutomationDoc, event: RunEvent): ContextRepository[] {
  const all = [...(automation.contextRepositories ?? []), ...(event.contextRepositories ?? [])];
  const seen = new Set<string>();
  return all.filter((r) => !seen.has(r.repo.toLowerCase()) && seen.add(r.repo.toLowerCase())).slice(0, 10);
}

export class AutomationRunner {
  constructor(private readonly d: AutomationRunnerDeps) {}

  /** Why the automation may not start a job now, or null when it may. */
  private async refusal(automation: AutomationDoc): Promise<string | null> {
    if (automation.paused) return 'the automation is paused';
    const since = startOfUtcDay(new Date());
    const { runsPerAutomationDay, runsPerProjectDay } = this.d.caps;
    if ((await this.d.store.startedSince({ automationId: automation._id }, since)) >= runsPerAutomationDay) {
      return `the automation started its ${runsPerAutomationDay} runs of today (UTC; DOCENT_AUTOMATION_RUNS_PER_DAY)`;
    }
    if ((await this.d.store.startedSince({ projectId: automation.projectId }, since)) >= runsPerProjectDay) {
      return `the project's automations started their ${runsPerProjectDay} runs of today (UTC; DOCENT_AUTOMATION_RUNS_PER_PROJECT_DAY)`;
    }
    return null;
  }

  /**
   * Answers one event: a run that started a job, or one refused (paused, over a cap) or failed (the job could not be
   * admitted), each recorded. The same event again returns its first run; one whose starter died is carried on.
   */
  async run(automation: AutomationDoc, event: RunEvent): Promise<AutomationRunDoc> {
    const { run, created } = await this.d.store.claimRun(automation, event.eventKey, event.origin);
    if (!created && run.status !== 'starting') return run;
    const refused = await this.refusal(automation);
    if (refused) return this.d.store.finishRun(run, { status: 'refused', reason: refused });
    try {
      const project = await this.d.tenancy.getProject(automation.projectId);
      if (!project) throw new AppError('not_found', 'the project no longer exists');
      const contextRepositories = contextOf(automation, event);
      const { job } = await this.d.starter.start(project, {
        prompt: event.instruction ?? automation.instruction,
        ...(contextRepositories.length ? { contextRepositories } : {}),
        ...(event.issue ? { issue: event.issue } : {}),
        origin: event.origin,
        automationId: automation._id,
        model: automation.model,
        ...(automation.requirePlanApproval ? { requirePlanApproval: true } : {}),
        // The same event is one job, even when the run above was claimed by a starter that died before it finished.
        idempotencyKey: `${automation.projectId}:automation:${automation._id}:${event.eventKey}`,
      });
      await this.d.store.recordOutcome(automation._id, null);
      return await this.d.store.finishRun(run, { status: 'started', jobId: job._id });
    } catch (err) {
      const reason = err instanceof AppError ? err.message : 'the job could not be started';
      this.d.log.warn({ err, automationId: automation._id, eventKey: event.eventKey }, 'an automation run could not start its job');
      await this.d.store.recordOutcome(automation._id, reason);
      return this.d.store.finishRun(run, { status: 'failed', reason });
    }
  }
}
