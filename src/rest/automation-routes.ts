import { automationToJson, runToJson } from '../automations/automation';
import { createAutomationBody, listRunsQuery, updateAutomationBody } from '../automations/automation-body';
import type { Deps } from '../deps';
import { projectOrigins } from '../edge/cors';
import { parseInput } from '../validate';
import { automationBody, automationListBody, automationRunBody, automationRunListBody } from './automation-schemas';
import { deletedBody } from './response-schemas';
import { route, type Route } from './router';

const theAutomation = { 200: { description: 'The automation', json: automationBody } };

/** REST paths of automations (docs/automations.md): the admin key of the project. */
export function automationRoutes(deps: Deps): Route[] {
  const service = deps.automations;
  const cors = projectOrigins(deps.tenancy, deps.config.corsOrigins);
  const base = '/v2/agent/{projectId}/automations';
  const one = `${base}/{automationId}`;
  const act = (path: string, summary: string, call: typeof service.pause) =>
    route({
      method: 'POST',
      path: `${one}/${path}`,
      summary,
      auth: 'admin',
      cors,
      responses: theAutomation,
      handler: async (req) => ({ status: 200, body: automationToJson(await call.call(service, req.caller, req.params.projectId!, req.params.automationId!)) }),
    });
  return [
    route({
      method: 'POST',
      path: base,
      summary: 'Create an automation: a trigger, an instruction and an output (201)',
      auth: 'admin',
      cors,
      body: createAutomationBody,
      responses: { 201: { description: 'The new automation', json: automationBody } },
      handler: async (req) => {
        const projectId = req.params.projectId!;
        const created = await service.create(req.caller, projectId, req.body);
        return { status: 201, body: automationToJson(created), headers: { location: `/v2/agent/${encodeURIComponent(projectId)}/automations/${created._id}` } };
      },
    }),
    route({
      method: 'GET',
      path: base,
      summary: "The project's automations, newest first",
      auth: 'admin',
      cors,
      responses: { 200: { description: 'The automations', json: automationListBody } },
      handler: async (req) => ({ status: 200, body: { automations: (await service.list(req.caller, req.params.projectId!)).map(automationToJson) } }),
    }),
    route({
      method: 'GET',
      path: one,
      summary: 'Get an automation, with its consecutive failures and last error',
      auth: 'admin',
      cors,
      responses: theAutomation,
      handler: async (req) => ({ status: 200, body: automationToJson(await service.get(req.caller, req.params.projectId!, req.params.automationId!)) }),
    }),
    route({
      method: 'PATCH',
      path: one,
      summary: 'Change an automation: the fields named (a trigger whole); its schedule follows',
      auth: 'admin',
      cors,
      body: updateAutomationBody,
      responses: theAutomation,
      handler: async (req) => ({ status: 200, body: automationToJson(await service.update(req.caller, req.params.projectId!, req.params.automationId!, req.body)) }),
    }),
    route({
      method: 'DELETE',
      path: one,
      summary: 'Delete an automation, its schedule and its runs; the jobs it started stay',
      auth: 'admin',
      cors,
      responses: { 200: { description: 'Deleted', json: deletedBody } },
      handler: async (req) => {
        await service.remove(req.caller, req.params.projectId!, req.params.automationId!);
        return { status: 200, body: { id: req.params.automationId!, deleted: true as const } };
      },
    }),
    route({
      method: 'POST',
      path: `${one}/trigger`,
      summary: 'Run an automation now (202 with the run and its jobId); a paused one is refused (400), one over its daily cap too (429), and either refusal is recorded among its runs',
      auth: 'admin',
      cors,
      responses: { 202: { description: 'The run, which started the job jobId', json: automationRunBody } },
      handler: async (req) => ({ status: 202, body: runToJson(await service.trigger(req.caller, req.params.projectId!, req.params.automationId!)) }),
    }),
    act('pause', 'Pause an automation: its schedule pauses, and runs that still arrive are refused and recorded', service.pause),
    act('resume', 'Resume a paused automation', service.resume),
    route({
      method: 'GET',
      path: `${one}/runs`,
      summary: "An automation's runs, newest first: the job each started, or why it started none (query: limit 1-100)",
      auth: 'admin',
      cors,
      responses: { 200: { description: 'The runs', json: automationRunListBody } },
      handler: async (req) => {
        const { limit } = parseInput(listRunsQuery, Object.fromEntries(req.query));
        return { status: 200, body: { runs: (await service.runs(req.caller, req.params.projectId!, req.params.automationId!, limit)).map(runToJson) } };
      },
    }),
  ];
}
