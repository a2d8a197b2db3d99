// What the checker reads from the stores after a run, as plain data: built by soak/lib/read-snapshot.ts from the
// soak's database, the GitHub double's dump and the workers' folders, or written by hand in a unit-test fixture.

export interface SnapshotJob {
  id: string;
  projectId: string;
  status: string;
  branch: string;
  prLink: string | null;
  turn: number;
  /** Why a failed job failed (its error code), for the report. */
  error?: string;
}

export interface Snapshot {
  jobs: SnapshotJob[];
  /** job_turns: one record per (job, turn). */
  turns: Array<{ jobId: string; turn: number; status: string }>;
  /** job_events: the stored sequence numbers (the SSE ids). */
  events: Array<{ jobId: string; seq: number }>;
  webhookEndpoints: Array<{ id: string; projectId: string; events: string[] }>;
  webhookMessages: Array<{ id: string; projectId: string; type: string }>;
  /** webhook_deliveries: docent's log of each attempt. */
  webhookDeliveries: Array<{ messageId: string; endpointId: string; attempt: number; ok: boolean; status: number | null }>;
  /** What the soak's receivers got: the `webhook-id` header, the endpoint, whether the signature verified, the answer. */
  received: Array<{ webhookId: string; endpointId: string; verified: boolean; status: number; type: string; jobId?: string; turn?: number; jobStatus?: string; planRevision?: number }>;
  threads: Array<{ id: string; turns: Array<{ messageId?: string; status: string }> }>;
  /** The GitHub double's pull requests, dumped at the end of the run. */
  pulls: Array<{ number: number; repository: string; head: string; state: string }>;
  /** Branches of the soak's repositories on the git server. */
  branches: Array<{ repository: string; name: string }>;
  /** Clones, sandboxes, setup-cache and other temporaries found in the workers' folders after the drain. */
  leftovers: string[];
}
