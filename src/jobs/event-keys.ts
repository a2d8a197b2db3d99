/**
 * The keys of a job's events, in one place. A key is unique per job (src/jobs/job-events.ts), so a writer that runs
 * again (an activity attempt, a repeated request) stores its event once; `attempt` is the turn's retry number, so a
 * retried turn writes its own events. Stored keys keep these exact shapes: changing one would store an event twice.
 */
export const eventKeys = {
  turnStarted: (turn: number, attempt: number) => `t${turn}:started:${attempt}`,
  status: (turn: number, status: string, attempt: number) => `t${turn}:status:${status}:${attempt}`,
  pullRequest: (turn: number, attempt: number) => `t${turn}:pull_request:${attempt}`,
  turnFinished: (turn: number, attempt: number) => `t${turn}:finished:${attempt}`,
  commit: (turn: number, sha: string) => `t${turn}:commit:${sha}`,
  /** One model call's run inside a turn's attempt: the activity's own attempt, for a turn moved to another clone the move, and for a plan its revision. */
  run: (turn: number, attempt: number, activityAttempt: number, move = 1, planRevision?: number) =>
    `t${turn}:r${attempt}:a${activityAttempt}${move > 1 ? `:m${move}` : ''}${planRevision ? `:plan${planRevision}` : ''}`,
  step: (run: string, step: number, call: number) => `${run}:step${step}:${call}`,
  /** A model call's own step event, beside its tool calls' (`step`). */
  modelCall: (run: string, step: number) => `${run}:step${step}:model`,
  check: (run: string, check: number) => `${run}:check${check}`,
  /** The egress proxy's connection `seq` of a run; 0 is the summary of those beyond the per-turn cap. */
  egress: (run: string, seq: number) => `${run}:egress${seq === 0 ? '-rest' : seq}`,
  archived: (at: Date) => `archived:${at.getTime()}`,
  planReady: (turn: number, revision: number) => `t${turn}:plan:${revision}`,
  planRevisionAsked: (turn: number, revision: number) => `t${turn}:plan-revision:${revision}`,
  planApproved: (turn: number, revision: number) => `t${turn}:plan-approved:${revision}`,
};
