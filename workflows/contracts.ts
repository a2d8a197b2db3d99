// Names and types shared by workflows, activities, the worker and the gateway. Types and constants only.

/** Task queue of agent job workflows and their activities. */
export const AGENT_TASK_QUEUE = 'docent-agent';
/** Task queue of documentation ingestion workflows and their activities. */
export const DOCS_TASK_QUEUE = 'docent-docs';
/** Every queue a docent worker serves. */
export const TASK_QUEUES = [AGENT_TASK_QUEUE, DOCS_TASK_QUEUE] as const;

/** Deployments (or test runs) sharing one Temporal namespace keep apart by a queue prefix. */
export function taskQueueName(prefix: string, queue: (typeof TASK_QUEUES)[number]): string {
  return prefix + queue;
}

/** The Keyword search attribute operators filter jobs by in the Temporal UI. */
export const PROJECT_SEARCH_ATTRIBUTE = 'DocentProjectId';

export interface WorkerSelfCheckInput {
  /** Who asked, shown in the Temporal UI's input column. */
  requestedBy: string;
}

export interface DependencyCheck {
  ok: boolean;
  error?: string;
}

export interface WorkerSelfCheckResult {
  /** The worker that ran the check, as Temporal knows it. */
  workerIdentity: string;
  taskQueue: string;
  mongodb: DependencyCheck;
  elasticsearch: DependencyCheck;
}
