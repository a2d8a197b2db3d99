// What the worker's side records of a turn once it is admitted: its plan and the decisions on it, its steps, usage,
// checks, egress, push and result, and how it ended. Only workflow-side code (activities, the reconciler) writes these;
// the gateway's folders may not import this module or the ledger itself (.dependency-cruiser.cjs).
import type { JobLedger } from './ledger';

export type TurnRecord = Pick<
  JobLedger,
  | 'jobs'
  | 'turns'
  | 'images'
  | 'finishTurn'
  | 'failLostTurn'
  | 'recordPlan'
  | 'askPlanRevision'
  | 'approvePlan'
  | 'recordUsage'
  | 'recordStep'
  | 'recordCheck'
  | 'recordEgress'
  | 'recordTurnResult'
  | 'recordProjectInstructions'
  | 'recordPush'
  | 'recordGapCheck'
>;
