// Every patch gate of the agent job workflow, in one place: the day it came, what it changed, where it is, whether it
// is active (patched(): old and new path) or deprecated (deprecatePatch(): new path only), and which recorded histories
// in test/fixtures/histories take its old path. A gate is deprecated once no recorded history and no workflow that can
// still be running takes its old path; replaying with the gate deprecated (test/integration/workflow-replay.test.ts)
// names the histories that do. A deprecated gate's call goes once no running workflow predates its deprecation.
// Why each stays or went: docs/decisions/2026-11-26-agent-job-workflow-as-story.md.
export const AGENT_JOB_PATCHES = {
  /**
   * 2026-11-21, active (agent-job/clones.ts removeClones): a job's clone is removed when it has no instruction left.
   * Old path: edit-and-pr, follow-up, worker-killed (recorded before it; they end without removeWorkspace). Reached
   * only before CloneRoute, so it goes with turnOnCloneWorker.
   */
  removeWorkspaceWhenIdle: 'remove-workspace-when-idle',
  /**
   * 2026-11-23, deprecated 2026-11-26 (agent-job/clones.ts removeClonesOfArchivedJob): an archived job's clone is
   * removed even so. Old path: none recorded (archived has the marker); an archived job's workflow ends, so none runs on.
   */
  removeWorkspaceWhenArchived: 'remove-workspace-when-archived',
  /**
   * 2026-11-23, active (agent-job.ts): a turn runs on the worker that holds its clone (CloneRoute, agent-job/edit.ts
   * editTurn) instead of each step anywhere (editTurnAnywhere). Old path the replay needs: remove-workspace,
   * checks-failed, stop-mid-turn, retry-after-push, archived (their removeWorkspace went to the shared queue).
   * edit-and-pr, follow-up, worker-killed and gap-check take it too but would replay on either path.
   */
  turnOnCloneWorker: 'turn-on-clone-worker',
  /**
   * 2026-11-23, deprecated 2026-11-26 (agent-job/deliver.ts): a gap-loop job's push is checked against the questions it
   * answers. Old path: none; `gapCheck` came with the gate, so no workflow has one without it (gap-check has the marker).
   */
  gapCheckAfterPush: 'gap-check-after-push',
  /**
   * 2026-11-24, deprecated 2026-11-26 (agent-job/edit.ts editTurn): a plan job plans and waits for approval before it
   * edits. Old path: none; `requirePlanApproval` came with the gate (plan-approval, plan-archived have the marker).
   */
  planApproval: 'plan-approval',
  /**
   * 2026-11-24, active (agent-job/deliver.ts): the checks are reported on GitHub (check run or commit status). Old path:
   * checks-failed (checks recorded before it, then a pull request straight away).
   */
  reportChecksOnGitHub: 'report-checks-on-github',
  /**
   * 2026-11-24, deprecated 2026-11-26 (agent-job/turn.ts runTurn): a turn from a pull-request comment is answered there.
   * Old path: none; `reply` came with the gate (pull-request-comment, pull-request-comment-unchanged have the marker).
   */
  answerPullRequestComment: 'answer-pull-request-comment',
  /**
   * 2026-11-24, deprecated 2026-11-26 (agent-job/edit.ts): a job's first step prefers the worker holding its project's
   * setup cache. Old path: none recorded (setup-cache-worker has the marker); `checks.setupCache` came the same day.
   */
  preferSetupCacheWorker: 'prefer-setup-cache-worker',
  /**
   * 2026-11-26, active (agent-job/job-handlers.ts): approve and revise updates record their decision before answering.
   * Old path: plan-approval (its updates answered at once, the plan loop recorded the approval); and any plan that was
   * waiting for approval when this came, which may wait for days yet.
   */
  planDecisionsRecordedByWorkflow: 'plan-decisions-recorded-by-workflow',
  /**
   * 2026-12-02, active (agent-job/status-attribute.ts): the workflow keeps the DocentJobStatus search attribute at the
   * job's status. Old path: every history recorded before it (none has `jobStatusAttribute` in its input, so none calls
   * the gate), and a workflow whose input has it but whose earlier turns ran on a worker from before (no marker). New
   * path: status-failed, status-archived, status-follow-up.
   */
  jobStatusSearchAttribute: 'job-status-search-attribute',
} as const;
