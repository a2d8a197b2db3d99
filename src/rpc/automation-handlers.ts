import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import { type AutomationDoc, type AutomationRunDoc, automationToJson, runToJson } from '../automations/automation';
import { createAutomationBody, listRunsQuery, updateAutomationBody } from '../automations/automation-body';
import type { Deps } from '../deps';
import { AutomationRunSchema, AutomationSchema, type AutomationService, type AutomationTrigger, type AutomationContextRepository, type UpdateAutomationRequest } from '../gen/agent/v2/automation_pb';
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

/** The fields create and update share, as REST names them; unset ones are left out. */
function fieldsFromProto(req: Pick<UpdateAutomationRequest, 'name' | 'trigger' | 'instruction' | 'output' | 'requirePlanApproval' | 'model'>) {
  return present({ name: req.name, trigger: triggerFromProto(req.trigger), instruction: req.instruction, output: req.output, requirePlanApproval: req.requirePlanApproval, model: req.model });
}

// The REST shape with the message's types: timestamps, and unset where REST says null.
function automationToMessage(a: AutomationDoc) {
  const at = (d: Date) => timestampFromDate(d);
  return create(AutomationSchema, {
    ...automationToJson(a),
    model: a.model,
    lastError: a.lastError ? { message: a.lastError.message, at: at(a.lastError.at) } : undefined,
    createdAt: at(a.createdAt),
    updatedAt: at(a.updatedAt),
  });
}

function runToMessage(r: AutomationRunDoc) {
  return create(AutomationRunSchema, { ...runToJson(r), jobId: r.jobId, turn: r.turn, reason: r.reason, createdAt: timestampFromDate(r.createdAt) });
}

/** Connect handlers of agent.v2.AutomationService over the same service as the REST routes. */
export function automationHandlers(deps: Deps): ServiceImpl<typeof AutomationService> {
  const service = deps.automations;
  return {
    async createAutomation(req, ctx) {
      const body = parseInput(createAutomationBody, { ...fieldsFromProto(req), ...(req.contextRepositories.length ? { contextRepositories: contextFromProto(req.contextRepositories) } : {}) });
      return { automation: automationToMessage(await service.create(callerOf(ctx), req.projectId, body)) };
    },
    async listAutomations(req, ctx) {
      return { automations: (await service.list(callerOf(ctx), req.projectId)).map(automationToMessage) };
    },
    async getAutomation(req, ctx) {
      return { automation: automationToMessage(await service.get(callerOf(ctx), req.projectId, req.automationId)) };
    },
    async updateAutomation(req, ctx) {
      const set = parseInput(updateAutomationBody, { ...fieldsFromProto(req), ...(req.replaceContextRepositories ? { contextRepositories: contextFromProto(req.contextRepositories) } : {}) });
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
