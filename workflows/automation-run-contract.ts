// The automation run workflow's contract: what a schedule's action carries, and the ids of the schedule and its runs.

/** What each run of an automation's schedule starts with. */
export interface AutomationRunInput {
  automationId: string;
  /** The action's workflow id; Temporal names each run `<it>-<scheduled time>`. */
  actionWorkflowId: string;
}

/** What the activity is handed: the event is the scheduled time, so a retried action is the same run. */
export interface StartAutomationRunInput {
  automationId: string;
  eventKey: string;
}

/** What a run did: started a job, or was refused or failed (with the reason), as its run record says. */
export interface AutomationRunOutcome {
  runId: string;
  status: string;
  jobId?: string;
  reason?: string;
}

/** The Temporal Schedule of an automation with a schedule trigger. */
export const automationScheduleId = (taskQueuePrefix: string, automationId: string) => `${taskQueuePrefix}automation-${automationId}`;
/** The workflow id the schedule's action gives its runs (Temporal appends the scheduled time). */
export const automationRunWorkflowId = (taskQueuePrefix: string, automationId: string) => `${taskQueuePrefix}automation-run-${automationId}`;
