import type { Db } from 'mongodb';
import type { z } from 'zod';
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
import { mintlifyAnalyticsRoutes } from './mintlify-analytics-routes';
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
    ...platformShapeRoutes(deps),
    ...mintlifyAnalyticsRoutes(deps),
  ];
}

/** One of the docs platform's analytics reads: its path under the project, its limit's bounds and what it returns. */
interface PlatformRead {
  path: string;
  summary: string;
  body: z.ZodType;
  limit: { max: number; fallback: number };
  read: (db: Db, domain: string, range: { from: Date; to: Date }, limit: number, query: URLSearchParams) => Promise<object>;
}

const platformReads: PlatformRead[] = [
  {
    path: 'searches',
    summary: 'Search queries in from..to (default the last 30 days) grouped by normalised query, most searched first: hits, click-through, top clicked page (limit 1-200, default 50)',
    body: searchAnalyticsBody,
    limit: { max: 200, fallback: 50 },
    read: (db, domain, range, limit) => searchReport(db, domain, range, limit),
  },
  {
    path: 'assistant',
    summary: 'Conversations started in from..to, newest first, each turn with question, answer, sources and kind (answered, not_in_docs); cursor pages on (limit 1-100, default 20)',
    body: conversationExportBody,
    limit: { max: 100, fallback: 20 },
    read: (db, domain, range, limit, q) => exportConversations(db, domain, range, limit, q.get('cursor') ?? undefined),
  },
  {
    path: 'feedback/by-page',
    summary: 'Up and down ratings given in from..to, counted on each page the rated answer cited, most rated first (limit 1-500, default 100)',
    body: feedbackByPageBody,
    limit: { max: 500, fallback: 100 },
    read: (db, domain, range, limit) => feedbackByPage(db, domain, range, limit),
  },
];

/**
 * docent's own shapes of the docs platform's analytics (`/v2/agent/{projectId}/analytics/…`), each over `from`/`to` and
 * bounded by `limit`; Mintlify's paths answer Mintlify's bodies (./mintlify-analytics-routes.ts).
 */
function platformShapeRoutes(deps: Deps): Route[] {
  const cors = projectOrigins(deps.tenancy, deps.config.corsOrigins);
  return platformReads.map((r) =>
    route({
      method: 'GET',
      path: `/v2/agent/{projectId}/analytics/${r.path}`,
      summary: r.summary,
      auth: 'admin',
      cors,
      responses: { 200: { description: 'The report', json: r.body } },
      handler: async (req) => {
        const project = await adminProject(deps.tenancy, req.caller, req.params.projectId!);
        if (!project.domain) throw new AppError('failed_precondition', 'the project has no documentation domain');
        const range = parseRange(req.query);
        const limit = parseLimit(req.query, r.limit.max, r.limit.fallback);
        const body = await r.read(deps.mongo.db, project.domain, range, limit, req.query);
        return { status: 200, body: { from: range.from.toISOString(), to: range.to.toISOString(), ...body } };
      },
    }),
  );
}
