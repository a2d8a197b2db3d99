// Task queues and search attributes shared by every workflow, the worker and the gateway.

/** Task queue of agent job workflows and their activities. */
export const AGENT_TASK_QUEUE = 'docent-agent';
/** Task queue of documentation ingestion workflows and their activities. */
export const DOCS_TASK_QUEUE = 'docent-docs';
/** Task queue of webhook delivery workflows and their activities: outbound HTTP apart from the agent's work. */
export const WEBHOOK_TASK_QUEUE = 'docent-webhooks';
/** Every queue a docent worker serves. */
export const TASK_QUEUES = [AGENT_TASK_QUEUE, DOCS_TASK_QUEUE, WEBHOOK_TASK_QUEUE] as const;

/** Deployments (or test runs) sharing one Temporal namespace keep apart by a queue prefix. */
export function taskQueueName(prefix: string, queue: (typeof TASK_QUEUES)[number]): string {
  return prefix + queue;
}

/** The Keyword search attribute operators filter jobs by in the Temporal UI. */
export const PROJECT_SEARCH_ATTRIBUTE = 'DocentProjectId';
/** The Keyword search attribute that shows a job's status (active, completed, failed, archived) in the Temporal UI. */
export const JOB_STATUS_SEARCH_ATTRIBUTE = 'DocentJobStatus';
