import type { Client } from '@temporalio/client';
import { agentJobWorkflowId } from '../../workflows/agent-job-contract';

/** When a job's workflow was started, when a worker first began one of its steps, and when its end was recorded (server clock, ms). */
export interface JobTimeline {
  jobId: string;
  queuedAt: number;
  startedAt: number;
  /** The job read completed (or failed) from here on: its last recordJobStatus step was done; the clone's removal follows. */
  finishedAt: number;
}

const eventMs = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

/** A closed job workflow's timeline from its history: its first activity's start is when the job started working. */
export async function jobTimeline(temporal: Client, jobId: string): Promise<JobTimeline> {
  const events = (await temporal.workflow.getHandle(agentJobWorkflowId(jobId)).fetchHistory()).events ?? [];
  const first = events.find((e) => e.activityTaskStartedEventAttributes);
  const statusSteps = new Set(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'recordJobStatus').map((e) => String(e.eventId)));
  const recorded = events.filter((e) => statusSteps.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId))).at(-1);
  if (!first || !recorded) throw new Error(`job ${jobId} has no recorded end (last event ${String(events.at(-1)?.eventType)})`);
  return { jobId, queuedAt: eventMs(events[0]!.eventTime), startedAt: eventMs(first.eventTime), finishedAt: eventMs(recorded.eventTime) };
}

/** Whether the job's workflow has closed (its history is whole). */
export async function workflowClosed(temporal: Client, jobId: string): Promise<boolean> {
  return (await temporal.workflow.getHandle(agentJobWorkflowId(jobId)).describe()).status.name !== 'RUNNING';
}

/** How one job fared beside a backlog of another project's: how many of those had started or finished before it. */
export function besideBacklog(backlog: JobTimeline[], job: JobTimeline) {
  return {
    startedBeforeItStarted: backlog.filter((j) => j.startedAt < job.startedAt).length,
    /** Went ahead of it: started after it was queued and before it started. */
    startedWhileItWaited: backlog.filter((j) => j.startedAt > job.queuedAt && j.startedAt < job.startedAt).length,
    finishedBeforeItStarted: backlog.filter((j) => j.finishedAt < job.startedAt).length,
    finishedBeforeItFinished: backlog.filter((j) => j.finishedAt < job.finishedAt).length,
  };
}
