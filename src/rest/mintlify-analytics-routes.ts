import type { Db } from 'mongodb';
import type { z } from 'zod';
import { type FeedbackFilter, mintlifyCallerStats, mintlifyConversations, mintlifyFeedback, mintlifyFeedbackByPage, mintlifySearches, mintlifyThread } from '../analytics/mintlify-analytics';
import { Clamps, mintlifyCount, mintlifyRange, offsetCursor } from '../analytics/mintlify-query';
import { adminProject } from '../auth/admin-project';
import type { Deps } from '../deps';
import { projectOrigins } from '../edge/cors';
import { AppError } from '../errors';
import {
  mintlifyCallerStatsBody,
  mintlifyConversationsBody,
  mintlifyFeedbackBody,
  mintlifyFeedbackByPageBody,
  mintlifySearchesBody,
  mintlifyThreadBody,
  mintlifyViewsBody,
  mintlifyVisitorsBody,
} from './analytics-schemas';
import { route, type Route } from './router';

/** What one of Mintlify's analytics reads gets: the project's docs domain, the query and the clamps it applied. */
interface ReadContext {
  db: Db;
  domain: string;
  query: URLSearchParams;
  params: Record<string, string>;
  clamps: Clamps;
}

interface MintlifyRead {
  path: string;
  summary: string;
  body: z.ZodType;
  read: (c: ReadContext) => Promise<object>;
}

const feedbackSources = ['code_snippet', 'contextual', 'agent', 'thumbs_only'];

function feedbackFilter(q: URLSearchParams): FeedbackFilter {
  const source = q.get('source') ?? undefined;
  if (source !== undefined && !feedbackSources.includes(source)) throw new AppError('invalid_argument', `source: must be one of ${feedbackSources.join(', ')}`);
  const status = q.get('status');
  return { source, ...(status !== null && { statuses: status.split(',').map((s) => s.trim()) }) };
}

const withCursor = <T extends { nextOffset: number | null }>({ nextOffset, ...rest }: T) => ({
  ...rest,
  nextCursor: nextOffset === null ? null : offsetCursor.encode(nextOffset),
});

/** An empty traffic report: docent does not serve the docs pages, so it sees neither views nor visitors. */
const noTraffic = (rows: 'views' | 'visitors') => async (c: ReadContext) => {
  mintlifyRange(c.query, c.clamps);
  mintlifyCount(c.query, 'limit', { min: 1, max: 250, fallback: 50 }, c.clamps);
  mintlifyCount(c.query, 'offset', { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: 0 }, c.clamps);
  return { totals: { human: 0, ai: 0, total: 0 }, [rows]: [], hasMore: false };
};

const reads: MintlifyRead[] = [
  {
    path: 'searches',
    summary: 'Search terms in dateFrom..dateTo, most searched first: hits, ctr, top clicked page; totalSearches (limit 1-100, default 50; cursor)',
    body: mintlifySearchesBody,
    read: async (c) => {
      const range = mintlifyRange(c.query, c.clamps);
      const limit = mintlifyCount(c.query, 'limit', { min: 1, max: 100, fallback: 50 }, c.clamps);
      return withCursor(await mintlifySearches(c.db, c.domain, range, limit, offsetCursor.decode(c.query.get('cursor'))));
    },
  },
  {
    path: 'assistant',
    summary: 'Assistant questions and answers in dateFrom..dateTo, one row per question, newest conversation first (limit 1-1000, read at most 100 at a time; cursor)',
    body: mintlifyConversationsBody,
    read: async (c) => {
      const range = mintlifyRange(c.query, c.clamps);
      const limit = mintlifyCount(c.query, 'limit', { min: 1, max: 1000, fallback: 100, docentMax: 100 }, c.clamps);
      const page = await mintlifyConversations(c.db, c.domain, range, limit, c.query.get('cursor'));
      return { ...page, hasMore: page.nextCursor !== null };
    },
  },
  {
    path: 'assistant/threads/{threadId}',
    summary: "One assistant conversation's messages, oldest first",
    body: mintlifyThreadBody,
    read: (c) => mintlifyThread(c.db, c.domain, c.params.threadId!),
  },
  {
    path: 'assistant/caller-stats',
    summary: 'Assistant questions in dateFrom..dateTo by what asked: web (a browser page), api (a server), other (MCP, or not recorded)',
    body: mintlifyCallerStatsBody,
    read: (c) => mintlifyCallerStats(c.db, c.domain, mintlifyRange(c.query, c.clamps)),
  },
  {
    path: 'feedback',
    summary: 'Ratings of assistant answers given in dateFrom..dateTo, newest first (source agent, status pending; limit 1-100, default 50; cursor)',
    body: mintlifyFeedbackBody,
    read: async (c) => {
      const range = mintlifyRange(c.query, c.clamps);
      const limit = mintlifyCount(c.query, 'limit', { min: 1, max: 100, fallback: 50 }, c.clamps);
      const filter = feedbackFilter(c.query);
      const page = withCursor(await mintlifyFeedback(c.db, c.domain, range, limit, offsetCursor.decode(c.query.get('cursor')), filter));
      return { ...page, hasMore: page.nextCursor !== null };
    },
  },
  {
    path: 'feedback/by-page',
    summary: 'Ratings given in dateFrom..dateTo counted on each page the rated answer cited, most rated first (limit 1-100, default 10)',
    body: mintlifyFeedbackByPageBody,
    read: async (c) => {
      const range = mintlifyRange(c.query, c.clamps);
      const limit = mintlifyCount(c.query, 'limit', { min: 1, max: 100, fallback: 10 }, c.clamps);
      return mintlifyFeedbackByPage(c.db, c.domain, range, limit, feedbackFilter(c.query));
    },
  },
  { path: 'views', summary: 'Page views: always empty, docent does not serve the docs pages (docs/analytics.md)', body: mintlifyViewsBody, read: noTraffic('views') },
  { path: 'visitors', summary: 'Visitors: always empty, docent does not serve the docs pages (docs/analytics.md)', body: mintlifyVisitorsBody, read: noTraffic('visitors') },
];

/** Mintlify's analytics at its paths and in its bodies (`/v1/analytics/{projectId}/…`), for the project's admin key. */
export function mintlifyAnalyticsRoutes(deps: Deps): Route[] {
  const cors = projectOrigins(deps.tenancy, deps.config.corsOrigins);
  return reads.map((r) =>
    route({
      method: 'GET',
      path: `/v1/analytics/{projectId}/${r.path}`,
      summary: `${r.summary}. Numbers above docent's bounds are lowered and named in X-Docent-Clamped`,
      auth: 'admin',
      cors,
      responses: { 200: { description: 'The report', json: r.body } },
      handler: async (req) => {
        const project = await adminProject(deps.tenancy, req.caller, req.params.projectId!);
        if (!project.domain) throw new AppError('failed_precondition', 'the project has no documentation domain');
        const clamps = new Clamps();
        const body = await r.read({ db: deps.mongo.db, domain: project.domain, query: req.query, params: req.params, clamps });
        return { status: 200, headers: clamps.headers(), body };
      },
    }),
  );
}
