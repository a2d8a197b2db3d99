import type { ServiceImpl } from '@connectrpc/connect';
import { jobToMessage } from '../agent/job';
import type { Deps } from '../deps';
import type { AgentService } from '../gen/agent/v2/agent_pb';

/** Connect handlers of agent.v2.AgentService; RPCs not listed here answer `unimplemented`. */
export function agentHandlers(deps: Deps): Partial<ServiceImpl<typeof AgentService>> {
  return {
    async getAgentJob(req, ctx) {
      const job = await deps.agentJobs.getJob(ctx.requestHeader.get('authorization'), { projectId: req.projectId, jobId: req.jobId });
      return { job: jobToMessage(job) };
    },
  };
}
