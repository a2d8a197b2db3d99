import { exportConversations } from '../analytics/conversation-export';
import { parseLimit, parseRange } from '../analytics/date-range';
import { analyticsReport } from '../analytics/docs-analytics';
import { feedbackByPage } from '../analytics/feedback-by-page';
import { searchReport } from '../analytics/search-report';
import { parseSince } from '../analytics/since';
import { adminProject } from '../auth/admin-project';
import type { Deps } from '../deps';
import { AppError } from '../errors';
import { analyticsBody, conversationExportBody, feedbackByPageBody, searchAnalyticsBody } from './analytics-schemas';
import { projectOrigins } from '../edge/cors';
import { route, type RestRequest, type Route } from './router';

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
    ...platformShapeRoutes(deps),
  ];
}

/** The docs platform's analytics paths (`/v1/analytics/{projectId}/…`), each over `from`/`to` and bounded by `limit`. */
function platformShapeRoutes(deps: Deps): Route[] {
  const cors = projectOrigins(deps.tenancy, deps.config.corsOrigins);
  const domainOf = async (req: RestRequest<unknown, 'admin'>) => {
    const project = await adminProject(deps.tenancy, req.caller, req.params.projectId!);
    if (!project.domain) throw new AppError('failed_precondition', 'the project has no documentation domain');
    return project.domain;
  };
  const window = (q: URLSearchParams) => {
    const r = parseRange(q);
    return { range: r, shown: { from: r.from.toISOString(), to: r.to.toISOString() } };
  };
  return [
    route({
      method: 'GET',
      path: '/v1/analytics/{projectId}/searches',
      summary: 'Search queries in from..to (default the last 30 days) grouped by normalised query, most searched first: hits, click-through, top clicked page (limit 1-200, default 50)',
      auth: 'admin',
      cors,
      responses: { 200: { description: 'Queries', json: searchAnalyticsBody } },
      handler: async (req) => {
        const domain = await domainOf(req);
        const { range, shown } = window(req.query);
        const limit = parseLimit(req.query, 200, 50);
        return { status: 200, body: { ...shown, ...(await searchReport(deps.mongo.db, domain, range, limit)) } };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/analytics/{projectId}/assistant',
      summary: 'Conversations started in from..to, newest first, each turn with question, answer, sources and kind (answered, not_in_docs); cursor pages on (limit 1-100, default 20)',
      auth: 'admin',
      cors,
      responses: { 200: { description: 'A page of conversations', json: conversationExportBody } },
      handler: async (req) => {
        const domain = await domainOf(req);
        const { range, shown } = window(req.query);
        const limit = parseLimit(req.query, 100, 20);
        return { status: 200, body: { ...shown, ...(await exportConversations(deps.mongo.db, domain, range, limit, req.query.get('cursor') ?? undefined)) } };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/analytics/{projectId}/feedback/by-page',
      summary: 'Up and down ratings given in from..to, counted on each page the rated answer cited, most rated first (limit 1-500, default 100)',
      auth: 'admin',
      cors,
      responses: { 200: { description: 'Pages', json: feedbackByPageBody } },
      handler: async (req) => {
        const domain = await domainOf(req);
        const { range, shown } = window(req.query);
        const limit = parseLimit(req.query, 500, 100);
        return { status: 200, body: { ...shown, ...(await feedbackByPage(deps.mongo.db, domain, range, limit)) } };
      },
    }),
  ];
}
