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
