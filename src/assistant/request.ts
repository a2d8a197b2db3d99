import { z } from 'zod';
import { AppError } from '../errors';
import type { SearchFilter } from '../search/docs-index';

// Schemas of the assistant request (docs/assistant.md, "Ask"). Objects are loose: AI SDK transports add fields (`id`, `trigger`,
// `messageId`, message `metadata`, non-text parts) that docent accepts and ignores.

/** The question (the last user message's text) in UTF-8 bytes: enough for a long question with a pasted snippet. */
export const maxQuestionBytes = 8 * 1024;

const part = z.looseObject({ type: z.string(), text: z.string().max(32_768).optional() });
const role = z.enum(['user', 'assistant', 'system']);
// AI SDK 4 clients may send `data` messages (Mintlify's v1 takes them); they carry no conversation and are ignored.
const v1Role = z.enum(['user', 'assistant', 'system', 'data']);

const filter = z.looseObject({
  version: z.string().max(100).optional(),
  language: z.string().max(35).optional(),
  groups: z.array(z.string().max(100)).max(20).optional(),
  pathPrefix: z.string().max(200).optional(),
});

const contextItem = z.looseObject({
  type: z.enum(['code', 'textSelection']).optional(),
  value: z.string().max(10_000),
  path: z.string().max(500).optional(),
  elementId: z.string().max(200).optional(),
});

const common = {
  fp: z.string().trim().min(1, 'is required: "anonymous" or a user id').max(200),
  threadId: z.string().max(200).nullish(),
  retrievalPageSize: z.number().int().min(1, 'must be between 1 and 20').max(20, 'must be between 1 and 20').optional(),
  filter: filter.optional(),
  context: z.array(contextItem).max(20).optional(),
  currentPath: z.string().max(200, 'must be at most 200 characters').optional(),
};

const atLeastOne = (what: string) => ({ message: `must hold at least one ${what}` });

/** v2 (AI SDK 5+ UI messages): each message carries `parts`. */
export const assistantRequestV2 = z.looseObject({
  ...common,
  messages: z
    .array(z.looseObject({ id: z.string().optional(), role, parts: z.array(part).max(100) }))
    .min(1, atLeastOne('message'))
    .max(200),
});

/** v1 (AI SDK 4 messages): each message carries `content`, and from 4.2 on also `parts` (Mintlify's schema makes either optional). */
export const assistantRequestV1 = z.looseObject({
  ...common,
  messages: z
    .array(z.looseObject({ id: z.string().optional(), role: v1Role, content: z.string().max(32_768).optional(), parts: z.array(part).max(100).optional() }))
    .min(1, atLeastOne('message'))
    .max(200),
});

export type AssistantRequestV2 = z.infer<typeof assistantRequestV2>;
export type AssistantRequestV1 = z.infer<typeof assistantRequestV1>;

export interface ChatTurn {
  role: 'user' | 'assistant';
  text: string;
}

export interface ContextItem {
  type?: 'code' | 'textSelection';
  value: string;
  path?: string;
  elementId?: string;
}

/** One assistant request, whichever API version it came in through. */
export interface AssistantQuestion {
  fp: string;
  question: string;
  /** The client's earlier turns; used only when the thread is new to docent. */
  clientHistory: ChatTurn[];
  threadId?: string;
  retrievalPageSize: number;
  filter?: SearchFilter;
  context: ContextItem[];
  currentPath?: string;
}

const textOfParts = (parts: Array<{ type: string; text?: string }> | undefined) =>
  (parts ?? [])
    .filter((p) => p.type === 'text' && p.text)
    .map((p) => p.text)
    .join('\n');

/** Reduces a validated v1 or v2 body to the question; the last message must be the user's, with text. */
export function toQuestion(body: AssistantRequestV1 | AssistantRequestV2): AssistantQuestion {
  const turns = body.messages.map((m) => {
    const text = 'content' in m && typeof m.content === 'string' && m.content.trim() ? m.content : textOfParts(m.parts);
    return { role: m.role, text: text.trim() };
  });
  const last = turns.at(-1)!;
  if (last.role !== 'user' || !last.text) throw new AppError('invalid_argument', 'messages: the last message must be a user message with text');
  const questionBytes = Buffer.byteLength(last.text, 'utf8');
  if (questionBytes > maxQuestionBytes) {
    throw new AppError('invalid_argument', `messages: the question (the last user message) is ${questionBytes} bytes; at most ${maxQuestionBytes} bytes (8 KiB) are accepted`);
  }
  const clientHistory = turns.slice(0, -1).filter((t): t is ChatTurn => (t.role === 'user' || t.role === 'assistant') && t.text !== '');
  const f = body.filter;
  const filterValue: SearchFilter | undefined = f
    ? {
        ...(f.version ? { version: f.version } : {}),
        ...(f.language ? { language: f.language } : {}),
        ...(f.groups?.length ? { groups: f.groups } : {}),
        ...(f.pathPrefix ? { pathPrefix: f.pathPrefix } : {}),
      }
    : undefined;
  return {
    fp: body.fp,
    question: last.text,
    clientHistory,
    threadId: body.threadId ?? undefined,
    retrievalPageSize: body.retrievalPageSize ?? 5,
    filter: filterValue,
    context: (body.context ?? []).map((c) => ({ type: c.type, value: c.value, path: c.path, elementId: c.elementId })),
    currentPath: body.currentPath,
  };
}

/** docent's bounds of `retrievalPageSize`; Connect refuses a value outside them, Mintlify's REST paths clamp it. */
export const retrievalPageSizeBounds = { min: 1, max: 20 } as const;

/** The REST bodies, Mintlify's paths: `retrievalPageSize` is any number, as Mintlify takes it (see clampRetrievalPageSize). */
export const restAssistantRequestV2 = assistantRequestV2.extend({ retrievalPageSize: z.number().optional() });
export const restAssistantRequestV1 = assistantRequestV1.extend({ retrievalPageSize: z.number().optional() });

/**
 * A `retrievalPageSize` Mintlify accepts but docent does not (a fraction, or outside 1..20) held to docent's bounds,
 * rounded down; `clamped` is what the X-Docent-Clamped header says, when anything changed.
 */
export function clampRetrievalPageSize<B extends { retrievalPageSize?: number }>(body: B): { body: B; clamped?: string } {
  const asked = body.retrievalPageSize;
  if (asked === undefined) return { body };
  const value = Math.min(retrievalPageSizeBounds.max, Math.max(retrievalPageSizeBounds.min, Math.floor(asked)));
  return value === asked ? { body } : { body: { ...body, retrievalPageSize: value }, clamped: `retrievalPageSize=${value}` };
}

/** The longest query searched; on Mintlify's path a longer one is cut to it, on docent's it is refused. */
export const maxSearchQueryChars = 2_000;

/**
 * Documentation search as Mintlify's Assistant API takes it: `{ query, pageSize?, scoreThreshold?, filter? }`, pageSize
 * 1..50 (default 10), scoreThreshold 0..1 (results scoring below it are left out; see docs/decisions/2026-11-24-widget-and-page-search-parameters.md).
 */
export const searchRequest = z.looseObject({
  query: z.string().trim().min(1, 'must not be empty').max(maxSearchQueryChars),
  pageSize: z.number().int().min(1, 'must be between 1 and 50').max(50, 'must be between 1 and 50').optional(),
  scoreThreshold: z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1').optional(),
  filter: filter.optional(),
});
export type SearchRequestBody = z.infer<typeof searchRequest>;

/**
 * The same on Mintlify's path, which takes any query string (an empty one finds nothing there, a long one is cut);
 * pageSize and scoreThreshold keep Mintlify's own bounds, which are docent's.
 */
export const mintlifySearchRequest = searchRequest.extend({ query: z.string() });

/** A reader opened a result of a search: the id the search returned and the page's path. */
export const searchClickRequest = z.looseObject({
  searchId: z.string().min(1).max(100),
  path: z.string().trim().min(1, 'must not be empty').max(500, 'must be at most 500 characters'),
});

/** Mintlify's page request: a page path (with or without a leading slash or `.md`) and optional groups to narrow to. */
export const pageRequest = z.looseObject({
  // Empty is a page that does not exist (404, as Mintlify answers), not a malformed request.
  path: z.string().trim().max(500, 'must be at most 500 characters'),
  groups: z.array(z.string().max(100)).max(20).optional(),
});
export type PageRequestBody = z.infer<typeof pageRequest>;

/** Feedback on an answer: the thread (and message) as the stream named them, a rating and an optional comment. */
export const feedbackRequest = z.looseObject({
  threadId: z.string().min(1).max(200),
  messageId: z.string().min(1).max(200).optional(),
  rating: z.enum(['up', 'down'], 'must be "up" or "down"'),
  comment: z.string().max(2_000, 'must be at most 2000 characters').optional(),
});
