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
