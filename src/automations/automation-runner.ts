// One run of an automation, wherever its event arrives: the gateway (a manual trigger) or the worker (a schedule's
// action, activities/automation-run.ts). The event's key makes a repeated event one run and, through the job's
// idempotency key, one job.
import { AppError } from '../errors';
import { awaitsApproval, writesPlan, type GapSpec, type JobDoc, type JobIssue, type JobOrigin } from '../jobs/job';
import type { ContextRepository } from '../../workflows/agent-job-contract';
import type { JobStarter } from '../jobs/job-starter';
import type { Logger } from '../log';
import type { TenancyStore } from '../tenancy/store';
import { type Notifier, notifyWebhookEvent } from '../webhooks/notify';
import { type AutomationDoc, type AutomationRunDoc, automationToJson, runToJson } from './automation';
import { type AutomationStore, startOfUtcDay } from './automation-store';

export interface AutomationRunnerDeps {
  store: AutomationStore;
  tenancy: TenancyStore;
  starter: JobStarter;
  log: Logger;
  /** The daily caps (DOCENT_AUTOMATION_RUNS_PER_DAY, DOCENT_AUTOMATION_RUNS_PER_PROJECT_DAY). */
  caps: { runsPerAutomationDay: number; runsPerProjectDay: number };
  /** Sends automation.run_started and automation.run_failed; without it none are sent. */
  notifier?: Notifier;
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
  /** A gap-loop run's questions: its job re-asks them against the pushed docs (src/automations/gap-trigger.ts). */
  gap?: GapSpec;
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
    const done = await this.start(automation, run, event);
    await this.announce(done);
    return done;
  }

  /**
   * The job an update_pull_request automation adds its run to: its newest, unless archived. A merged or closed pull
   * request archives its job (src/github/webhook-service.ts), so the run after that opens a new one.
   */
  private async openJob(automation: AutomationDoc): Promise<JobDoc | null> {
    if (automation.output !== 'update_pull_request') return null;
    const latest = await this.d.starter.latestJobOf(automation.projectId, automation._id);
    return latest && latest.status !== 'archived' ? latest : null;
  }

  /** A started run is automation.run_started, a failed one automation.run_failed with the failures counted so far. */
  private async announce(run: AutomationRunDoc): Promise<void> {
    if (!this.d.notifier || (run.status !== 'started' && run.status !== 'failed')) return;
    const automation = await this.d.store.byId(run.automationId);
    if (!automation) return;
    const type = run.status === 'started' ? 'automation.run_started' : 'automation.run_failed';
    // The run's id names the message: a retried run announces once.
    await notifyWebhookEvent(this.d.notifier, {
      messageId: `msg_${run._id}_${run.status}`,
      projectId: run.projectId,
      type,
      data: { automation: automationToJson(automation), run: runToJson(run) },
    }).catch((err: unknown) => this.d.log.warn({ err, automationId: run.automationId, runId: run._id }, `could not send ${type}`));
  }

  private async start(automation: AutomationDoc, run: AutomationRunDoc, event: RunEvent): Promise<AutomationRunDoc> {
    try {
      const project = await this.d.tenancy.getProject(automation.projectId);
      if (!project) throw new AppError('not_found', 'the project no longer exists');
      const contextRepositories = contextOf(automation, event);
      const open = await this.openJob(automation);
      if (open) {
        if (awaitsApproval(open) || writesPlan(open)) throw new AppError('failed_precondition', `its job ${open._id} waits for its plan to be approved; approve the plan or archive the job`);
        const { job } = await this.d.starter.continueWith(project, open, event.instruction ?? automation.instruction);
        await this.d.store.recordOutcome(automation._id, null);
        return await this.d.store.finishRun(run, { status: 'started', jobId: job._id, turn: job.turn });
      }
      const { job } = await this.d.starter.start(project, {
        prompt: event.instruction ?? automation.instruction,
        ...(contextRepositories.length ? { contextRepositories } : {}),
        ...(event.issue ? { issue: event.issue } : {}),
        ...(event.gap ? { gap: event.gap } : {}),
        origin: event.origin,
        automationId: automation._id,
        model: automation.model ?? undefined,
        ...(automation.requirePlanApproval ? { requirePlanApproval: true } : {}),
        // The same event is one job, even when the run above was claimed by a starter that died before it finished.
        idempotencyKey: `${automation.projectId}:automation:${automation._id}:${event.eventKey}`,
      });
      await this.d.store.recordOutcome(automation._id, null);
      return await this.d.store.finishRun(run, { status: 'started', jobId: job._id, turn: 1 });
    } catch (err) {
      const reason = err instanceof AppError ? err.message : 'the job could not be started';
      this.d.log.warn({ err, automationId: automation._id, eventKey: event.eventKey }, 'an automation run could not start its job');
      await this.d.store.recordOutcome(automation._id, reason);
      return this.d.store.finishRun(run, { status: 'failed', reason });
    }
  }
}
