import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import type { AutomationDoc, AutomationRunDoc } from '../automations/automation';
import { createAutomationBody, listRunsQuery, updateAutomationBody } from '../automations/automation-body';
import type { Deps } from '../deps';
import { AutomationRunSchema, AutomationSchema, type AutomationService, type AutomationTrigger, type AutomationContextRepository } from '../gen/agent/v2/automation_pb';
import { parseInput } from '../validate';
import { callerOf, type MethodAuth } from './caller';

/** Every agent.v2.AutomationService method needs the project's admin key. */
export const automationMethodAuth: MethodAuth<typeof AutomationService> = {
  createAutomation: 'admin',
  listAutomations: 'admin',
  getAutomation: 'admin',
  updateAutomation: 'admin',
  deleteAutomation: 'admin',
  triggerAutomation: 'admin',
  pauseAutomation: 'admin',
  resumeAutomation: 'admin',
  listAutomationRuns: 'admin',
};

/** The fields a message sets: an unset optional is absent, as in a REST body (MongoDB would store undefined as null). */
const present = <T extends object>(fields: T) => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;

/** The trigger as REST writes it, so the same schema checks both: unset fields are left out, not sent empty. */
function triggerFromProto(t: AutomationTrigger | undefined) {
  if (!t) return undefined;
  const { type, cron, timeZone, repo, branch, label, threshold } = t;
  return present({ type, cron, timeZone, repo, branch, label, threshold });
}

const contextFromProto = (list: AutomationContextRepository[]) => list.map((c) => ({ repo: c.repo, ...(c.ref !== undefined ? { ref: c.ref } : {}) }));

function automationToMessage(a: AutomationDoc) {
  return create(AutomationSchema, {
    id: a._id,
    name: a.name,
    trigger: a.trigger,
    instruction: a.instruction,
    output: a.output,
    contextRepositories: a.contextRepositories ?? [],
    requirePlanApproval: a.requirePlanApproval ?? false,
    model: a.model,
    paused: a.paused,
    consecutiveFailures: a.consecutiveFailures,
    lastError: a.lastError ? { message: a.lastError.message, at: timestampFromDate(a.lastError.at) } : undefined,
    createdAt: timestampFromDate(a.createdAt),
    updatedAt: timestampFromDate(a.updatedAt),
  });
}

function runToMessage(r: AutomationRunDoc) {
  return create(AutomationRunSchema, {
    id: r._id,
    eventKey: r.eventKey,
    origin: r.origin,
    status: r.status,
    jobId: r.jobId,
    turn: r.turn,
    reason: r.reason,
    createdAt: timestampFromDate(r.createdAt),
  });
}

/** Connect handlers of agent.v2.AutomationService over the same service as the REST routes. */
export function automationHandlers(deps: Deps): ServiceImpl<typeof AutomationService> {
  const service = deps.automations;
  return {
    async createAutomation(req, ctx) {
      const body = parseInput(
        createAutomationBody,
        present({
          name: req.name,
          trigger: triggerFromProto(req.trigger),
          instruction: req.instruction,
          output: req.output,
          ...(req.contextRepositories.length ? { contextRepositories: contextFromProto(req.contextRepositories) } : {}),
          requirePlanApproval: req.requirePlanApproval,
          model: req.model,
        }),
      );
      return { automation: automationToMessage(await service.create(callerOf(ctx), req.projectId, body)) };
    },
    async listAutomations(req, ctx) {
      return { automations: (await service.list(callerOf(ctx), req.projectId)).map(automationToMessage) };
    },
    async getAutomation(req, ctx) {
      return { automation: automationToMessage(await service.get(callerOf(ctx), req.projectId, req.automationId)) };
    },
    async updateAutomation(req, ctx) {
      const set = parseInput(
        updateAutomationBody,
        present({
          name: req.name,
          trigger: triggerFromProto(req.trigger),
          instruction: req.instruction,
          output: req.output,
          contextRepositories: req.replaceContextRepositories ? contextFromProto(req.contextRepositories) : undefined,
          requirePlanApproval: req.requirePlanApproval,
          model: req.model,
        }),
      );
      return { automation: automationToMessage(await service.update(callerOf(ctx), req.projectId, req.automationId, set)) };
    },
    async deleteAutomation(req, ctx) {
      await service.remove(callerOf(ctx), req.projectId, req.automationId);
      return {};
    },
    async triggerAutomation(req, ctx) {
      return { run: runToMessage(await service.trigger(callerOf(ctx), req.projectId, req.automationId)) };
    },
    async pauseAutomation(req, ctx) {
      return { automation: automationToMessage(await service.pause(callerOf(ctx), req.projectId, req.automationId)) };
    },
    async resumeAutomation(req, ctx) {
      return { automation: automationToMessage(await service.resume(callerOf(ctx), req.projectId, req.automationId)) };
    },
    async listAutomationRuns(req, ctx) {
      const { limit } = parseInput(listRunsQuery, { limit: req.limit });
      return { runs: (await service.runs(callerOf(ctx), req.projectId, req.automationId, limit)).map(runToMessage) };
    },
  };
}
