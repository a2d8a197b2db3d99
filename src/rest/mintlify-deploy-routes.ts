import { z } from 'zod';
import { adminProject } from '../auth/admin-project';
import type { Deps } from '../deps';
import { DeployUpdates } from '../docs/deploy-updates';
import { projectOrigins } from '../edge/cors';
import { AppError } from '../errors';
import { documentedSchemas } from './response-schemas';
import { route, type Route } from './router';

const updateQueuedBody = z.object({ statusId: z.string().describe('GET /v1/project/update-status/{statusId} follows it') }).register(documentedSchemas, { id: 'MintlifyUpdateQueued' });

const updateStatusBody = z
  .object({
    _id: z.string(),
    projectId: z.string(),
    createdAt: z.iso.datetime(),
    endedAt: z.iso.datetime().optional(),
    status: z.enum(['queued', 'in_progress', 'success', 'failure']),
    summary: z.string(),
    logs: z.array(z.string()),
    subdomain: z.string().describe("The project's documentation domain"),
  })
  .register(documentedSchemas, { id: 'MintlifyUpdateStatus' });

const previewRequest = z.looseObject({ branch: z.string().min(1, 'is required').max(200) });

/** Mintlify's docs deploy endpoints (`/v1/project/…`) over docent's docs sync (docs/api.md, "Mintlify compatibility"). */
export function mintlifyDeployRoutes(deps: Deps): Route[] {
  const updates = new DeployUpdates(deps.mongo.db, { temporal: deps.temporal, taskQueuePrefix: deps.config.temporal.taskQueuePrefix, gitBaseUrl: deps.config.github.gitUrl });
  const cors = projectOrigins(deps.tenancy, deps.config.corsOrigins);
  return [
    route({
      method: 'POST',
      path: '/v1/project/update/{projectId}',
      summary: "Mintlify's deploy update: sync the project's followed docs now (queued behind a running sync); 202 {statusId}. A project that follows no docs is 400",
      auth: 'admin',
      cors,
      responses: { 202: { description: 'The sync is queued', json: updateQueuedBody } },
      handler: async (req) => {
        const project = await adminProject(deps.tenancy, req.caller, req.params.projectId!);
        return { status: 202, body: { statusId: await updates.queue(project._id, project.domain) } };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/project/update-status/{statusId}',
      summary: "Mintlify's deploy status: where the sync an update queued is (queued, in_progress, success, failure), what it indexed or why it failed",
      auth: 'admin',
      cors,
      responses: { 200: { description: 'The update', json: updateStatusBody } },
      handler: async (req) => {
        // The path names no project: the admin key's own is the one whose updates it may read.
        const projectId = req.caller.projectId;
        if (!projectId) throw new AppError('not_found', 'no such update');
        return { status: 200, body: await updates.status(projectId, req.params.statusId!) };
      },
    }),
    route({
      method: 'POST',
      path: '/v1/project/preview/{projectId}',
      summary: "Mintlify's preview deployment: not available in docent (403, as Mintlify answers where previews are not available); docent previews a branch's docs only inside the gap loop",
      auth: 'admin',
      cors,
      body: previewRequest,
      responses: { 202: { description: 'Never: docent has no preview deployments', json: z.object({ statusId: z.string(), previewUrl: z.string() }) } },
      handler: async (req) => {
        await adminProject(deps.tenancy, req.caller, req.params.projectId!);
        throw new AppError('permission_denied', 'preview deployments are not available in docent: it serves the docs it indexes, not sites (an update syncs the followed branch)');
      },
    }),
  ];
}
