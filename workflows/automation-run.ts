import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { AutomationRunInput, AutomationRunOutcome } from './automation-run-contract';

const { startAutomationRun } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});

/**
 * One run of an automation's schedule: the activity records the run and starts its job. The event is the scheduled
 * time, which Temporal appends to the action's workflow id, so a retried activity or action is still one run and one job.
 */
export async function automationRun(input: AutomationRunInput): Promise<AutomationRunOutcome> {
  const { workflowId } = workflowInfo();
  const prefix = `${input.actionWorkflowId}-`;
  const scheduledAt = workflowId.startsWith(prefix) ? workflowId.slice(prefix.length) : workflowId;
  return startAutomationRun({ automationId: input.automationId, eventKey: `schedule:${scheduledAt}` });
}
