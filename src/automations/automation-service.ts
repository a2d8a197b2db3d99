import type { Caller } from '../auth/api-keys';
import { adminProject } from '../auth/admin-project';
import { AppError } from '../errors';
import type { RepositoryGate } from '../forges/repository-gate';
import type { ProjectDoc, TenancyStore } from '../tenancy/store';
import { type AutomationDoc, type AutomationRunDoc, type AutomationSpec, originOfTrigger } from './automation';
import type { UpdateAutomation } from './automation-body';
import type { AutomationRunner } from './automation-runner';
import { type AutomationSchedules, removeAutomationSchedule, syncAutomationSchedule } from './automation-schedule';
import { newAutomation, type AutomationStore } from './automation-store';
import { shortestInterval } from './schedule-interval';

const idShape = /^[A-Za-z0-9_.-]{1,64}$/;

export interface AutomationServiceDeps {
  tenancy: TenancyStore;
  store: AutomationStore;
  runner: AutomationRunner;
  schedules: AutomationSchedules;
  /** Whether the project's organization may name the repositories a trigger or its context names (src/forges/repository-gate.ts). */
  gate?: RepositoryGate;
  /** The operator's bounds: how often a schedule may run, how many automations a project may have. */
  limits: { minIntervalMinutes: number; perProject: number };
}

/**
 * Automation operations behind REST (the admin key of the project). Temporal's schedule changes first, the stored
 * automation after: a schedule Temporal refuses (its cron) or cannot take (it is down) leaves the automation as it was.
 */
export class AutomationService {
  constructor(private readonly d: AutomationServiceDeps) {}

  /** A trigger's repository and the context repositories must each be readable through a connection of the project's organization. */
  private async checkRepositories(project: ProjectDoc, spec: Pick<Partial<AutomationSpec>, 'trigger' | 'contextRepositories'>): Promise<void> {
    if (!this.d.gate) return;
    const trigger = spec.trigger as { repo?: string } | undefined;
    const named = [...(trigger?.repo ? [{ at: 'trigger.repo', repo: trigger.repo }] : []), ...(spec.contextRepositories ?? []).map((r, i) => ({ at: `contextRepositories[${i}].repo`, repo: r.repo }))];
    for (const { at, repo } of named) {
      await this.d.gate.resolve(project.orgId, repo, 'read').catch((err: unknown) => {
        throw err instanceof AppError ? new AppError(err.code, `${at}: ${err.message}`) : err;
      });
    }
  }

  private async mustGet(projectId: string, id: string): Promise<AutomationDoc> {
    const found = idShape.test(id) ? await this.d.store.get(projectId, id) : null;
    if (!found) throw new AppError('not_found', 'automation not found');
    return found;
  }

  /** A schedule that would run more often than the operator allows is the caller's 400, with how often it would. */
  private checkInterval(trigger: AutomationSpec['trigger'] | undefined): void {
    if (trigger?.type !== 'schedule') return;
    const { minIntervalMinutes } = this.d.limits;
    const shortest = shortestInterval(trigger.cron, trigger.timeZone);
    if (shortest < minIntervalMinutes * 60_000)
      throw new AppError(
        'invalid_argument',
        `trigger.cron: ${trigger.cron} runs ${Math.round(shortest / 1000)} s apart at its closest; a schedule may run at most every ${minIntervalMinutes} minutes (DOCENT_AUTOMATION_MIN_INTERVAL_MINUTES)`,
      );
  }

  async create(caller: Caller, projectId: string, spec: AutomationSpec): Promise<AutomationDoc> {
    const project = await adminProject(this.d.tenancy, caller, projectId);
    this.checkInterval(spec.trigger);
    const { perProject } = this.d.limits;
    if ((await this.d.store.countOf(projectId)) >= perProject)
      throw new AppError('resource_exhausted', `project ${projectId} has ${perProject} automations, the most it may have (DOCENT_AUTOMATIONS_PER_PROJECT): delete one first`);
    await this.checkRepositories(project, spec);
    const doc = newAutomation(projectId, spec);
    await syncAutomationSchedule(this.d.schedules, doc);
    try {
      await this.d.store.insert(doc);
    } catch (err) {
      await removeAutomationSchedule(this.d.schedules, doc._id).catch(() => undefined);
      throw err;
    }
    return doc;
  }

  async list(caller: Caller, projectId: string): Promise<AutomationDoc[]> {
    await adminProject(this.d.tenancy, caller, projectId);
    return this.d.store.list(projectId);
  }

  async get(caller: Caller, projectId: string, id: string): Promise<AutomationDoc> {
    await adminProject(this.d.tenancy, caller, projectId);
    return this.mustGet(projectId, id);
  }

  /** Sets the named fields (a trigger whole); the schedule follows a changed cron, or goes with a trigger of another type. */
  async update(caller: Caller, projectId: string, id: string, set: UpdateAutomation): Promise<AutomationDoc> {
    return this.change(caller, projectId, id, set);
  }

  /** A paused automation starts nothing: its schedule is paused, and any run that still arrives is refused and recorded. */
  pause(caller: Caller, projectId: string, id: string): Promise<AutomationDoc> {
    return this.change(caller, projectId, id, { paused: true });
  }

  resume(caller: Caller, projectId: string, id: string): Promise<AutomationDoc> {
    return this.change(caller, projectId, id, { paused: false });
  }

  private async change(caller: Caller, projectId: string, id: string, set: UpdateAutomation & { paused?: boolean }): Promise<AutomationDoc> {
    const project = await adminProject(this.d.tenancy, caller, projectId);
    const current = await this.mustGet(projectId, id);
    this.checkInterval(set.trigger);
    await this.checkRepositories(project, set);
    await syncAutomationSchedule(this.d.schedules, { ...current, ...set });
    const updated = await this.d.store.update(projectId, id, set);
    if (!updated) throw new AppError('not_found', 'automation not found');
    return updated;
  }

  async remove(caller: Caller, projectId: string, id: string): Promise<void> {
    await adminProject(this.d.tenancy, caller, projectId);
    await this.mustGet(projectId, id);
    await removeAutomationSchedule(this.d.schedules, id);
    await this.d.store.remove(projectId, id);
  }

  /** Deletes every automation of a project being deleted (the caller was authorised): schedules first; returns their ids. */
  async removeAllOf(projectId: string): Promise<string[]> {
    const all = await this.d.store.list(projectId);
    for (const a of all) {
      await removeAutomationSchedule(this.d.schedules, a._id);
      await this.d.store.remove(projectId, a._id);
    }
    return all.map((a) => a._id);
  }

  /** Runs it now, whatever its trigger, as its own event; a refused or failed run is recorded, then answered as an error. */
  async trigger(caller: Caller, projectId: string, id: string): Promise<AutomationRunDoc & { jobId: string }> {
    await adminProject(this.d.tenancy, caller, projectId);
    const automation = await this.mustGet(projectId, id);
    const run = await this.d.runner.run(automation, { origin: originOfTrigger({ type: 'manual' }), eventKey: `manual:${crypto.randomUUID()}` });
    if (run.jobId) return { ...run, jobId: run.jobId };
    const code = run.status === 'refused' && !automation.paused ? 'resource_exhausted' : 'failed_precondition';
    throw new AppError(code, `the run was ${run.status}: ${run.reason ?? 'no reason recorded'}`);
  }

  async runs(caller: Caller, projectId: string, id: string, limit: number): Promise<AutomationRunDoc[]> {
    await adminProject(this.d.tenancy, caller, projectId);
    await this.mustGet(projectId, id);
    return this.d.store.listRuns(id, limit);
  }
}
