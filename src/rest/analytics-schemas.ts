import { z } from 'zod';
import { documentedSchemas } from './response-schemas';

const questionGroup = z.object({ question: z.string(), count: z.number().int(), variants: z.array(z.string()).describe('Other wordings of the same question') });

export const analyticsBody = z
  .object({
    domain: z.string(),
    since: z.iso.datetime(),
    volume: z.object({ questions: z.number().int(), threads: z.number().int(), answered: z.number().int(), unanswered: z.number().int(), ratedUp: z.number().int(), ratedDown: z.number().int() }),
    topQuestions: z.array(questionGroup).describe('Most asked questions, grouped by meaning'),
    unanswered: z.array(questionGroup).describe('Questions with no passage above the relevance floor, grouped by meaning'),
    downRated: z.array(z.object({ question: z.string(), answer: z.string(), comment: z.string().optional(), threadId: z.string(), at: z.iso.datetime() })),
    truncated: z.boolean().describe('Only the newest questions were read'),
  })
  .register(documentedSchemas, { id: 'DocsAnalytics' });

const range = { from: z.iso.datetime(), to: z.iso.datetime() };

export const searchAnalyticsBody = z
  .object({
    ...range,
    queries: z.array(
      z.object({
        query: z.string().describe('Newest wording of the normalised query'),
        searches: z.number().int(),
        hits: z.number().int().describe('Result count of the newest search'),
        searchesWithoutHits: z.number().int(),
        clicks: z.number().int(),
        clickThrough: z.number().describe('Searches with a result opened / searches'),
        topClickedPage: z.object({ path: z.string(), clicks: z.number().int() }).nullable(),
        via: z
          .object({ api: z.number().int(), mcp: z.number().int(), assistant: z.number().int() })
          .describe("Searches by client: the REST search endpoint, the MCP search_docs tool, or the assistant's retrieval for a question"),
        lastSearchedAt: z.iso.datetime(),
      }),
    ),
    scanned: z.number().int(),
    truncated: z.boolean().describe('Only the newest 20,000 searches of the range were read'),
  })
  .register(documentedSchemas, { id: 'SearchAnalytics' });

export const conversationExportBody = z
  .object({
    ...range,
    conversations: z.array(
      z.object({
        threadId: z.string(),
        createdAt: z.iso.datetime(),
        turns: z.array(
          z.object({
            question: z.string(),
            answer: z.string(),
            kind: z
              .enum(['answered', 'not_in_docs', 'clarifying'])
              .describe('not_in_docs: no passage above the relevance floor; clarifying is never emitted (docent does not ask clarifying questions)'),
            status: z.enum(['completed', 'failed', 'aborted']),
            sources: z.array(z.object({ path: z.string(), url: z.string(), title: z.string() })),
            feedback: z.object({ rating: z.enum(['up', 'down']), comment: z.string().optional() }).optional(),
            at: z.iso.datetime(),
          }),
        ),
      }),
    ),
    nextCursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last'),
  })
  .register(documentedSchemas, { id: 'ConversationExport' });

export const feedbackByPageBody = z
  .object({
    ...range,
    pages: z.array(z.object({ path: z.string(), up: z.number().int(), down: z.number().int() })),
    truncated: z.boolean().describe('Only the newest 5,000 rated threads were read'),
  })
  .register(documentedSchemas, { id: 'FeedbackByPage' });

// Mintlify's analytics bodies (test/fixtures/mintlify/analytics.openapi.json); docent's extras are marked.

const nextCursor = z.string().nullable().describe('Pass as cursor for the next page; null on the last');

export const mintlifySearchesBody = z
  .object({
    searches: z.array(
      z.object({
        searchQuery: z.string(),
        hits: z.number().describe('Result count of the newest search'),
        ctr: z.number().describe('Searches with a result opened / searches'),
        topClickedPage: z.string().nullable(),
        lastSearchedAt: z.iso.datetime(),
        searches: z.number().int().describe('docent: searches of this term'),
        clicks: z.number().int().describe('docent: results opened'),
      }),
    ),
    totalSearches: z.number().int().min(0),
    nextCursor,
  })
  .register(documentedSchemas, { id: 'MintlifySearches' });

export const mintlifyConversationsBody = z
  .object({
    conversations: z.array(
      z.object({
        id: z.string().describe('The answer message id'),
        threadId: z.string().describe('docent: its thread (GET …/assistant/threads/{threadId})'),
        timestamp: z.iso.datetime(),
        query: z.string(),
        response: z.string(),
        responseType: z.enum(['answer', 'clarifying_question']).describe('Always answer: docent asks no clarifying questions'),
        sources: z.array(z.object({ title: z.string(), url: z.string() })),
        resolutionStatus: z.enum(['answered', 'unanswered']).describe('unanswered: no passage above the relevance floor'),
        queryCategory: z.string().nullable().describe('Always null: docent does not categorise questions'),
        pageUrl: z.string().nullable().describe('The currentPath the question was asked from'),
      }),
    ),
    nextCursor,
    hasMore: z.boolean(),
  })
  .register(documentedSchemas, { id: 'MintlifyAssistantConversations' });

export const mintlifyThreadBody = z
  .object({
    threadId: z.string(),
    createdAt: z.iso.datetime(),
    messages: z.array(z.object({ id: z.string(), role: z.enum(['user', 'assistant']), content: z.string(), createdAt: z.iso.datetime() })),
  })
  .register(documentedSchemas, { id: 'MintlifyAssistantThread' });

export const mintlifyCallerStatsBody = z
  .object({
    web: z.number().int().describe('Asked from a browser page (the request had an Origin)'),
    api: z.number().int().describe('Asked by a server over REST, Connect or gRPC'),
    other: z.number().int().describe('Asked through MCP, or before docent recorded what asked'),
    total: z.number().int(),
  })
  .register(documentedSchemas, { id: 'MintlifyAssistantCallerStats' });

const feedbackSource = z.enum(['code_snippet', 'contextual', 'agent', 'thumbs_only']);

export const mintlifyFeedbackBody = z
  .object({
    feedback: z.array(
      z.object({
        id: z.string(),
        path: z.string(),
        comment: z.string().nullable(),
        createdAt: z.iso.datetime().nullable(),
        source: feedbackSource.describe("Always agent: docent's ratings are of assistant answers"),
        status: z.enum(['pending', 'in_progress', 'resolved', 'dismissed']).describe('Always pending: docent does not triage feedback'),
        helpful: z.boolean(),
        contact: z.string().nullable(),
      }),
    ),
    nextCursor,
    hasMore: z.boolean(),
  })
  .register(documentedSchemas, { id: 'MintlifyFeedback' });

export const mintlifyFeedbackByPageBody = z
  .object({
    feedback: z.array(z.object({ path: z.string(), thumbsUp: z.number().int(), thumbsDown: z.number().int(), code: z.number().int(), total: z.number().int() })),
    hasMore: z.boolean(),
  })
  .register(documentedSchemas, { id: 'MintlifyFeedbackByPage' });

const trafficTotals = z.object({ human: z.number(), ai: z.number(), total: z.number() });
const trafficRow = z.object({ path: z.string(), human: z.number(), ai: z.number(), total: z.number() });

export const mintlifyViewsBody = z
  .object({ totals: trafficTotals, views: z.array(trafficRow), hasMore: z.boolean() })
  .describe('Always empty: docent does not serve the docs pages, so it sees no page views (docs/analytics.md)')
  .register(documentedSchemas, { id: 'MintlifyViews' });

export const mintlifyVisitorsBody = z
  .object({ totals: trafficTotals, visitors: z.array(trafficRow), hasMore: z.boolean() })
  .describe('Always empty: docent does not serve the docs pages, so it sees no visitors (docs/analytics.md)')
  .register(documentedSchemas, { id: 'MintlifyVisitors' });
