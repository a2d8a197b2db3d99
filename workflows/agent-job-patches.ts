// Every patched() gate of the agent job workflow, in one place: the day it came, what it changed, and why the old path
// is still there. A gate goes (deprecatePatch, then removed) once no running workflow and no recorded history in
// test/fixtures/histories takes its old path; the replay tests (test/integration/workflow-replay.test.ts) say which do.
export const AGENT_JOB_PATCHES = {
  /** 2026-11-21: the clone is removed when the job has no instruction left (before CloneRoute). Old path: edit-and-pr, follow-up, worker-killed, gap-check, archived. */
  removeWorkspaceWhenIdle: 'remove-workspace-when-idle',
  /** 2026-11-23: an archived job's clone is removed even so. Old path: histories archived before it (none recorded besides `archived`, which has it). */
  removeWorkspaceWhenArchived: 'remove-workspace-when-archived',
  /** 2026-11-23: a turn runs on the worker that holds its clone (CloneRoute). Old path: edit-and-pr, follow-up, worker-killed, archived, gap-check, … (nine histories). */
  turnOnCloneWorker: 'turn-on-clone-worker',
  /** 2026-11-23: a gap-loop job's push is checked against the questions it answers. Old path: none recorded (gap-check has the marker). */
  gapCheckAfterPush: 'gap-check-after-push',
  /** 2026-11-24: a plan job plans and waits for approval before it edits. Old path: none recorded (plan histories have the marker). */
  planApproval: 'plan-approval',
  /** 2026-11-24: the checks are reported on GitHub (check run or commit status). Old path: histories with checks recorded before it (checks-failed). */
  reportChecksOnGitHub: 'report-checks-on-github',
  /** 2026-11-24: a turn from a pull-request comment is answered there. Old path: none recorded (the comment histories have the marker). */
  answerPullRequestComment: 'answer-pull-request-comment',
  /** 2026-11-24: a job's first step prefers the worker holding its project's setup cache. Old path: none recorded. */
  preferSetupCacheWorker: 'prefer-setup-cache-worker',
  /** 2026-11-26: approve and revise updates record their decision before answering. Old path: plan-approval, plan-archived. */
  planDecisionsRecordedByWorkflow: 'plan-decisions-recorded-by-workflow',
} as const;
