import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type { AnswerEvent } from '../assistant/events';
import { assistantRequestV1, assistantRequestV2, feedbackRequest, pageRequest, searchRequest, toQuestion, type AssistantQuestion } from '../assistant/request';
import { parseInput } from '../validate';
import type { Deps } from '../deps';
import { whileLeased } from '../auth/stream-leases';
import { clientIpKey } from '../limits/client-context';
import type { AssistantService as AssistantServiceV1 } from '../gen/discovery/v1/assistant_pb';
import type { SearchFilter as SearchFilterV1, SearchService } from '../gen/discovery/v1/search_pb';
import type { AssistantService as AssistantServiceV2, SearchFilter as SearchFilterV2 } from '../gen/discovery/v2/assistant_pb';
import { callerOf, type MethodAuth } from './caller';

/** The assistant's methods need an assistant key of the domain they name. */
export const assistantV2MethodAuth: MethodAuth<typeof AssistantServiceV2> = { sendMessage: 'assistant', sendFeedback: 'assistant' };
export const assistantV1MethodAuth: MethodAuth<typeof AssistantServiceV1> = { sendMessage: 'assistant' };
export const searchMethodAuth: MethodAuth<typeof SearchService> = { search: 'assistant', getPage: 'assistant' };

// Connect requests go through the same zod schemas as REST bodies, so both surfaces accept and refuse the same things.
const filterOf = (f: SearchFilterV1 | SearchFilterV2 | undefined) =>
  f ? { version: f.version, language: f.language, groups: f.groups.length ? f.groups : undefined, pathPrefix: f.pathPrefix } : undefined;

/** Yields the answer's events while holding one of the key's stream slots; a revoked key ends them with 401. */
async function* answerEvents(deps: Deps, domain: string, question: AssistantQuestion, ctx: HandlerContext, onStart: (threadId: string) => void): AsyncGenerator<AnswerEvent> {
  const caller = callerOf(ctx);
  const lease = deps.streams.acquire(caller, ctx.signal);
  try {
    const client = ctx.requestHeader.get('origin') ? 'web' : 'api';
    const s = await deps.assistant.startAnswer({ caller, domain, question, signal: lease.signal, remoteAddress: ctx.values.get(clientIpKey), client });
    ctx.responseHeader.set('x-thread-id', s.threadId);
    for (const [k, v] of Object.entries(s.limitHeaders)) ctx.responseHeader.set(k, v);
    onStart(s.threadId);
    yield* whileLeased(s.events, lease);
  } finally {
    lease.release();
  }
}

/** discovery.v2.AssistantService: the answer as typed events, ending with the thread id. */
export function assistantV2Handlers(deps: Deps): ServiceImpl<typeof AssistantServiceV2> {
  return {
    async *sendMessage(req, ctx) {
      const body = parseInput(assistantRequestV2, {
        fp: req.fp,
        messages: req.messages.map((m) => ({ id: m.id, role: m.role, parts: m.parts.map((p) => ({ type: p.type, text: p.text })) })),
        threadId: req.threadId,
        retrievalPageSize: req.retrievalPageSize,
        filter: filterOf(req.filter),
        context: req.context.length ? req.context.map((c) => ({ type: c.type || undefined, value: c.value, path: c.path, elementId: c.elementId })) : undefined,
        currentPath: req.currentPath,
      });
      let threadId = '';
      for await (const e of answerEvents(deps, req.domain, toQuestion(body), ctx, (id) => (threadId = id))) {
        if (e.type === 'text') yield { event: { case: 'textDelta', value: e.delta } };
        else if (e.type === 'source') yield { event: { case: 'source', value: e.source } };
      }
      yield { event: { case: 'finish', value: { threadId } } };
    },
    async sendFeedback(req, ctx) {
      const body = parseInput(feedbackRequest, { threadId: req.threadId, messageId: req.messageId || undefined, rating: req.rating, comment: req.comment || undefined });
      await deps.assistant.recordFeedback(callerOf(ctx), req.domain, body);
      return {};
    },
  };
}

/** discovery.v1.AssistantService (deprecated): the same answer, in v1's events. */
export function assistantV1Handlers(deps: Deps): ServiceImpl<typeof AssistantServiceV1> {
  return {
    async *sendMessage(req, ctx) {
      const body = parseInput(assistantRequestV1, {
        fp: req.fp,
        messages: req.messages.map((m) => ({ id: m.id, role: m.role, content: m.content, parts: m.parts.map((p) => ({ type: p.type, text: p.text })) })),
        threadId: req.threadId,
        retrievalPageSize: req.retrievalPageSize,
      });
      let threadId = '';
      for await (const e of answerEvents(deps, req.domain, toQuestion(body), ctx, (id) => (threadId = id))) {
        if (e.type === 'text') yield { event: { case: 'textDelta', value: e.delta } };
        else if (e.type === 'source') yield { event: { case: 'source', value: { id: e.source.id, url: e.source.url, title: e.source.title } } };
      }
      yield { event: { case: 'finishThreadId', value: threadId } };
    },
  };
}

/** discovery.v1.SearchService. */
export function searchHandlers(deps: Deps): ServiceImpl<typeof SearchService> {
  return {
    async search(req, ctx) {
      const body = parseInput(searchRequest, { query: req.query, pageSize: req.pageSize, scoreThreshold: req.scoreThreshold, filter: filterOf(req.filter) });
      const { passages, headers } = await deps.assistant.search(callerOf(ctx), req.domain, body, { signal: ctx.signal, remoteAddress: ctx.values.get(clientIpKey) });
      for (const [name, value] of Object.entries(headers)) ctx.responseHeader.set(name, value);
      return { results: passages.map(({ path, url, title, headings, content, score }) => ({ path, url, title, headings, content, score })) };
    },
    async getPage(req, ctx) {
      const body = parseInput(pageRequest, { path: req.path, groups: req.groups.length ? req.groups : undefined });
      const page = await deps.assistant.getPage(callerOf(ctx), req.domain, body.path, { groups: body.groups, remoteAddress: ctx.values.get(clientIpKey) });
      for (const [name, value] of Object.entries(page.headers)) ctx.responseHeader.set(name, value);
      return { path: page.path, content: page.markdown };
    },
  };
}
