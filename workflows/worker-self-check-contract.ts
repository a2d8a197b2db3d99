// The worker self-check workflow's contract: its input and result.

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
