import { type ActivityOptions, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { NON_RETRYABLE_AGENT_ERRORS, type AgentJobInput, type AgentJobProgress } from '../agent-job-contract';
import type { CloneRoute } from '../clone-route';
import type { JobHandlers } from './job-handlers';

const nonRetryableErrorTypes = [...NON_RETRYABLE_AGENT_ERRORS];

/** What every step of a job works with: its input, the state its handlers share, where its clone is, and its activities. */
export type Job = JobActivities & {
  input: AgentJobInput;
  state: JobHandlers;
  /** Where the clone is; absent in histories from before turns ran on their clone's worker. */
  route: CloneRoute | undefined;
};

/** Moves the turn's progress (what `progressQuery` answers) to a stage. */
export type Stage = (stage: AgentJobProgress['stage']) => void;

export type JobActivities = ReturnType<typeof jobActivities>;

/** The job's activities, by kind of step: each kind has its own timeouts and retries. */
export function jobActivities(input: AgentJobInput) {
  const gitOptions: ActivityOptions = {
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: input.heartbeatTimeoutMs,
    retry: { maximumAttempts: 5, nonRetryableErrorTypes },
  };
  // The agent's tool loop, the project's setup and checks, and the repair rounds all run in this one activity.
  const agentOptions: ActivityOptions = {
    startToCloseTimeout: '60 minutes',
    heartbeatTimeout: input.heartbeatTimeoutMs,
    retry: { maximumAttempts: 3, nonRetryableErrorTypes },
  };
  return {
    gitOptions,
    agentOptions,
    git: proxyActivities<Activities>(gitOptions),
    agent: proxyActivities<Activities>(agentOptions),
    github: proxyActivities<Activities>({
      startToCloseTimeout: '1 minute',
      retry: { maximumAttempts: 5, initialInterval: '2 seconds', nonRetryableErrorTypes },
    }),
    status: proxyActivities<Activities>({
      startToCloseTimeout: '30 seconds',
      retry: { maximumAttempts: 20, maximumInterval: '30 seconds' },
    }),
  };
}
