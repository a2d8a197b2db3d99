// The Temporal Schedule of each automation with a schedule trigger, kept in step with the automation: made, changed,
// paused, resumed and deleted with it. Its action starts workflows/automation-run.ts.
import { type Client as TemporalClient, isGrpcServiceError, ScheduleNotFoundError, ScheduleOverlapPolicy, ServiceError } from '@temporalio/client';
import { AppError } from '../errors';
import { AGENT_TASK_QUEUE, taskQueueName } from '../../workflows/task-queues';
import { automationRunWorkflowId, automationScheduleId, type AutomationRunInput } from '../../workflows/automation-run-contract';
import type { AutomationDoc } from './automation';
import { gapCheckCron } from './gap-trigger';

export interface AutomationSchedules {
  temporal: TemporalClient;
  taskQueuePrefix: string;
}

const grpcInvalidArgument = 3;
/** Temporal reads six fields as a year last: docent's six (a fixed second first) go to it as seven, in any year. */
const temporalCron = (cron: string) => (cron.split(/ +/).length === 6 ? `${cron} *` : cron);

/**
 * Temporal refused the schedule itself (its cron, its time zone): the caller's 400, with Temporal's reason. The SDK
 * turns the server's "Invalid schedule spec" into a TypeError; any other refusal of the request stays a gRPC error.
 */
function refusedSpec(err: unknown): AppError | null {
  if (err instanceof TypeError) return new AppError('invalid_argument', `trigger: Temporal refused the schedule: ${err.message.slice(0, 300)}`);
  const cause = err instanceof ServiceError ? err.cause : err;
  if (!isGrpcServiceError(cause) || cause.code !== grpcInvalidArgument) return null;
  return new AppError('invalid_argument', `trigger: Temporal refused the schedule: ${cause.details.slice(0, 300)}`);
}

function scheduleParts(s: AutomationSchedules, a: Scheduled) {
  const actionWorkflowId = automationRunWorkflowId(s.taskQueuePrefix, a._id);
  const input: AutomationRunInput = { automationId: a._id, actionWorkflowId };
  return {
    // An unanswered_questions automation is checked on its own schedule (src/automations/gap-trigger.ts).
    spec: a.trigger.type === 'schedule' ? { cronExpressions: [temporalCron(a.trigger.cron)], timezone: a.trigger.timeZone } : { cronExpressions: [gapCheckCron], timezone: 'UTC' },
    // A run that is slow to start its job holds the next one back rather than racing it.
    policies: { overlap: ScheduleOverlapPolicy.BUFFER_ONE },
    action: {
      type: 'startWorkflow' as const,
      workflowType: 'automationRun',
      workflowId: actionWorkflowId,
      taskQueue: taskQueueName(s.taskQueuePrefix, AGENT_TASK_QUEUE),
      args: [input],
      workflowExecutionTimeout: 30 * 60_000,
      staticSummary: `automation ${a.name.slice(0, 80)} of ${a.projectId}`,
    },
  };
}

type Scheduled = AutomationDoc & { trigger: { type: 'schedule' | 'unanswered_questions' } };

const isSchedule = (a: AutomationDoc): a is Scheduled => a.trigger.type === 'schedule' || a.trigger.type === 'unanswered_questions';

/** Makes the automation's Temporal Schedule match it: created, updated, paused or resumed, or deleted when it has none. */
export async function syncAutomationSchedule(s: AutomationSchedules, a: AutomationDoc): Promise<void> {
  const scheduleId = automationScheduleId(s.taskQueuePrefix, a._id);
  if (!isSchedule(a)) return removeAutomationSchedule(s, a._id);
  const parts = scheduleParts(s, a);
  const handle = s.temporal.schedule.getHandle(scheduleId);
  const note = a.paused ? 'paused with its automation' : 'active';
  try {
    try {
      await handle.update((prev) => ({ ...prev, ...parts, state: { ...prev.state, paused: a.paused, note } }));
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
      await s.temporal.schedule.create({ scheduleId, ...parts, state: { paused: a.paused, note } });
    }
  } catch (err) {
    throw refusedSpec(err) ?? err;
  }
}

/** Deletes the automation's schedule; one that is not there (another trigger) is no error. */
export async function removeAutomationSchedule(s: AutomationSchedules, automationId: string): Promise<void> {
  await s.temporal.schedule
    .getHandle(automationScheduleId(s.taskQueuePrefix, automationId))
    .delete()
    .catch((err: unknown) => {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    });
}
