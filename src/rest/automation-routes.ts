import { automationToJson, runToJson } from '../automations/automation';
import { createAutomationBody, listRunsQuery, updateAutomationBody } from '../automations/automation-body';
import type { Deps } from '../deps';
import { projectOrigins } from '../edge/cors';
import { parseInput } from '../validate';
import { automationBody, automationListBody, automationRunBody, automationRunListBody, mintlifyTriggerBody } from './automation-schemas';
import { deletedBody } from './response-schemas';
import type { Caller } from '../auth/api-keys';
import { route, type CorsPolicy, type RestRequest, type Route } from './router';

const theAutomation = { 200: { description: 'The automation', json: automationBody } };

/** REST paths of automations (docs/automations.md): the admin key of the project. */
export function automationRoutes(deps: Deps): Route[] {
  const cors = projectOrigins(deps.tenancy, deps.config.corsOrigins);
  return [...automationRoutesAt(deps, { base: '/v2/agent/{projectId}/automations', auth: 'admin', cors, callerOf: async (req) => req.caller! }), mintlifyTriggerRoute(deps, cors)];
}

/**
 * Mintlify's automation trigger (`POST /v1/workflow/{projectId}/{workflowSchemaId}/trigger`): its workflow schema is
 * docent's automation and the queued instance is the run, so it answers what docent's own trigger does, in Mintlify's body.
 */
function mintlifyTriggerRoute(deps: Deps, cors: CorsPolicy): Route {
  return route({
    method: 'POST',
    path: '/v1/workflow/{projectId}/{workflowSchemaId}/trigger',
    summary:
      "Mintlify's automation trigger: runs the automation workflowSchemaId now, as POST /v2/agent/{projectId}/automations/{automationId}/trigger does (202 {schemaId, instanceId, jobId}: the automation, its run and the job the run started); a paused automation is 400, an unknown one 404",
    auth: 'admin',
    cors,
    responses: { 202: { description: 'The run was queued and started the job jobId', json: mintlifyTriggerBody } },
    handler: async (req) => {
      const run = await deps.automations.trigger(req.caller, req.params.projectId!, req.params.workflowSchemaId!);
      return { status: 202, body: { schemaId: run.automationId, instanceId: run._id, jobId: run.jobId } };
    },
  });
}

/** Where a set of automation routes lives and who calls it: the agent API's admin key, or the operator API's own check. */
export interface AutomationRouteSet {
  base: string;
  auth: 'admin' | 'none';
  cors?: CorsPolicy;
  /** The project's admin caller the service authorises (the operator API makes one for an operator key that sees the project). */
  callerOf: (req: Pick<RestRequest, 'headers' | 'params' | 'caller' | 'method' | 'remoteAddress'>) => Promise<Caller>;
}

/** The automation routes under `base`, over the one service (so both surfaces validate and answer alike). */
export function automationRoutesAt(deps: Deps, set: AutomationRouteSet): Route[] {
  const service = deps.automations;
  const { base, auth, cors, callerOf } = set;
  const one = `${base}/{automationId}`;
  const act = (path: string, summary: string, call: typeof service.pause) =>
    route({
      method: 'POST',
      path: `${one}/${path}`,
      summary,
      auth,
      ...(cors && { cors }),
      responses: theAutomation,
      handler: async (req) => ({ status: 200, body: automationToJson(await call.call(service, await callerOf(req), req.params.projectId!, req.params.automationId!)) }),
    });
  return [
    route({
      method: 'POST',
      path: base,
      summary: 'Create an automation: a trigger, an instruction and an output (201)',
      auth,
      ...(cors && { cors }),
      body: createAutomationBody,
      responses: { 201: { description: 'The new automation', json: automationBody } },
      handler: async (req) => {
        const projectId = req.params.projectId!;
        const created = await service.create(await callerOf(req), projectId, req.body);
        return { status: 201, body: automationToJson(created), headers: { location: `${base.replace('{projectId}', encodeURIComponent(projectId))}/${created._id}` } };
      },
    }),
    route({
      method: 'GET',
      path: base,
      summary: "The project's automations, newest first",
      auth,
      ...(cors && { cors }),
      responses: { 200: { description: 'The automations', json: automationListBody } },
      handler: async (req) => ({ status: 200, body: { automations: (await service.list(await callerOf(req), req.params.projectId!)).map(automationToJson) } }),
    }),
    route({
      method: 'GET',
      path: one,
      summary: 'Get an automation, with its consecutive failures and last error',
      auth,
      ...(cors && { cors }),
      responses: theAutomation,
      handler: async (req) => ({ status: 200, body: automationToJson(await service.get(await callerOf(req), req.params.projectId!, req.params.automationId!)) }),
    }),
    route({
      method: 'PATCH',
      path: one,
      summary: 'Change an automation: the fields named (a trigger whole); its schedule follows',
      auth,
      ...(cors && { cors }),
      body: updateAutomationBody,
      responses: theAutomation,
      handler: async (req) => ({ status: 200, body: automationToJson(await service.update(await callerOf(req), req.params.projectId!, req.params.automationId!, req.body)) }),
    }),
    route({
      method: 'DELETE',
      path: one,
      summary: 'Delete an automation, its schedule and its runs; the jobs it started stay',
      auth,
      ...(cors && { cors }),
      responses: { 200: { description: 'Deleted', json: deletedBody } },
      handler: async (req) => {
        await service.remove(await callerOf(req), req.params.projectId!, req.params.automationId!);
        return { status: 200, body: { id: req.params.automationId!, deleted: true as const } };
      },
    }),
    route({
      method: 'POST',
      path: `${one}/trigger`,
      summary: 'Run an automation now (202 with the run and its jobId); a paused one is refused (400), one over its daily cap too (429), and either refusal is recorded among its runs',
      auth,
      ...(cors && { cors }),
      responses: { 202: { description: 'The run, which started the job jobId', json: automationRunBody } },
      handler: async (req) => ({ status: 202, body: runToJson(await service.trigger(await callerOf(req), req.params.projectId!, req.params.automationId!)) }),
    }),
    act('pause', 'Pause an automation: its schedule pauses, and runs that still arrive are refused and recorded', service.pause),
    act('resume', 'Resume a paused automation', service.resume),
    route({
      method: 'GET',
      path: `${one}/runs`,
      summary: "An automation's runs, newest first: the job each started, or why it started none (query: limit 1-100)",
      auth,
      ...(cors && { cors }),
      responses: { 200: { description: 'The runs', json: automationRunListBody } },
      handler: async (req) => {
        const { limit } = parseInput(listRunsQuery, Object.fromEntries(req.query));
        return { status: 200, body: { runs: (await service.runs(await callerOf(req), req.params.projectId!, req.params.automationId!, limit)).map(runToJson) } };
      },
    }),
  ];
}
