// The unanswered_questions trigger: the gap loop, automated. Each check (its schedule's run, hourly) counts the
// readers whose questions the project's domain failed since the automation's last gap-loop run; at the threshold it starts a run
// whose job is the one `docent gaps fix` makes, below it only the check is recorded on the automation.
import { failedTurnsSince, gapJobOf, readersOf, type GapSources } from '../gaps/gap-questions';
import type { TenancyStore } from '../tenancy/store';
import type { AutomationDoc, AutomationRunDoc, GapCheckRecord } from './automation';
import type { AutomationRunner } from './automation-runner';
import type { AutomationStore } from './automation-store';

/** How often an unanswered_questions automation looks (its Temporal Schedule, src/automations/automation-schedule.ts). */
export const gapCheckCron = '0 * * * *';

export interface GapTriggerDeps {
  store: AutomationStore;
  runner: AutomationRunner;
  tenancy: TenancyStore;
  gaps: GapSources;
}

type GapAutomation = AutomationDoc & { trigger: { type: 'unanswered_questions' } };

export const isGapAutomation = (a: AutomationDoc): a is GapAutomation => a.trigger.type === 'unanswered_questions';

/**
 * One check. `checkKey` names the check (its scheduled time), so a retried check is the same run and the same job; the
 * window starts where the last gap-loop run started, so a second check without new questions starts nothing.
 */
export async function checkUnansweredQuestions(d: GapTriggerDeps, automation: GapAutomation, checkKey: string): Promise<{ check: GapCheckRecord; run: AutomationRunDoc | null }> {
  const since = (await d.store.lastStartedRun(automation._id, 'unanswered_questions'))?.createdAt ?? automation.createdAt;
  const threshold = automation.trigger.threshold;
  const project = await d.tenancy.getProject(automation.projectId);
  const record = async (counted: { questions: number; readers: number }, run: AutomationRunDoc | null, reason?: string) => {
    const check: GapCheckRecord = { at: new Date(), since, ...counted, threshold, runId: run?._id ?? null, ...(reason ? { reason } : {}) };
    await d.store.recordCheck(automation._id, check);
    return { check, run };
  };
  if (!project?.domain) return record({ questions: 0, readers: 0 }, null, 'the project has no documentation domain');
  const failed = await failedTurnsSince(d.gaps.db, project.domain, since, { includeRestricted: automation.trigger.includeRestricted === true });
  // Readers, not questions: one reader asking again and again reaches no threshold.
  const readers = readersOf(failed);
  if (readers < threshold)
    return record({ questions: failed.length, readers }, null, `${readers} of ${threshold} readers with unanswered or down-rated questions since ${since.toISOString()} (${failed.length} questions)`);
  const job = await gapJobOf(d.gaps, { domain: project.domain, failed });
  const run = await d.runner.run(automation, {
    origin: 'unanswered_questions',
    eventKey: `unanswered_questions:${since.toISOString()}:${checkKey}`,
    // The automation's instruction leads; the questions and what the docs say around them follow as data.
    instruction: `${automation.instruction.trim()}\n\n${job.prompt}`,
    gap: job.gap,
  });
  return record({ questions: failed.length, readers }, run);
}
