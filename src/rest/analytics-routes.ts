import { analyticsReport } from '../analytics/docs-analytics';
import { parseSince } from '../analytics/since';
import { adminProject } from '../auth/admin-project';
import type { Deps } from '../deps';
import { AppError } from '../errors';
import { analyticsBody } from './analytics-schemas';
import { projectOrigins } from '../edge/cors';
import { route, type Route } from './router';

/** Docs analytics of a project's domain, for its admin key (docs/analytics.md). */
export function analyticsRoutes(deps: Deps): Route[] {
  return [
    route({
      method: 'GET',
      path: '/v2/agent/{projectId}/analytics',
      summary: "What readers asked the project's docs (query: since, e.g. 7d): volume, top and unanswered questions grouped by meaning, down-rated answers",
      auth: 'admin',
      cors: projectOrigins(deps.tenancy, deps.config.corsOrigins),
      responses: { 200: { description: 'The report', json: analyticsBody } },
      handler: async (req) => {
        const project = await adminProject(deps.tenancy, req.caller, req.params.projectId!);
        const since = parseSince(req.query.get('since') ?? undefined);
        if (!project.domain) throw new AppError('failed_precondition', 'the project has no documentation domain');
        return { status: 200, body: await analyticsReport({ db: deps.mongo.db, embedder: deps.embedder }, project.domain, since) };
      },
    }),
  ];
}
