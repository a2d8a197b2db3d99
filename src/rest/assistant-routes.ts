import { encodeDataStream, dataStreamHeaders } from '../assistant/data-stream';
import type { AnswerSession } from '../assistant/service';
import {
  clampRetrievalPageSize,
  feedbackRequest,
  maxSearchQueryChars,
  mintlifySearchRequest,
  pageRequest,
  restAssistantRequestV1,
  restAssistantRequestV2,
  searchClickRequest,
  searchRequest,
  type SearchRequestBody,
  toQuestion,
} from '../assistant/request';
import { encodeUiMessageStream, uiMessageStreamHeaders } from '../assistant/ui-message-stream';
import { whileLeased } from '../auth/stream-leases';
import type { Deps } from '../deps';
import { clientIp } from '../limits/client-ip';
import type { LlmsFile } from '../docs/llms-service';
import { isSameOrigin, projectOrigins, publicCors } from '../edge/cors';
import { AppError } from '../errors';
import { mintlifySearchBody, originCheckBody, pageBody, pageNotFoundBody, searchResultsBody } from './response-schemas';
import { route, type RestRequest, type RestResponse, type Route } from './router';

/** REST paths of the documentation assistant and search (docs/assistant.md). */
export function assistantRoutes(deps: Deps): Route[] {
  // The assistant key is public: browsers may call only from the project's allowed origins.
  const cors = projectOrigins(deps.tenancy);
  /** Takes one of the key's stream slots, then starts the answer; the slot is given back when the response closes. */
  const answer = async (req: RestRequest<Parameters<typeof toQuestion>[0], 'assistant'>, respond: (s: AnswerSession) => RestResponse) => {
    const { body, clamped } = clampRetrievalPageSize(req.body);
    const question = toQuestion(body);
    const lease = deps.streams.acquire(req.caller, req.signal);
    try {
      const s = await deps.assistant.startAnswer({
        caller: req.caller,
        domain: req.params.domain!,
        question,
        remoteAddress: clientIp(req.remoteAddress, req.headers['x-forwarded-for'], deps.config.trustedProxies),
        signal: lease.signal,
        via: 'assistant',
        // Browsers send Origin on every cross-origin POST (and same-origin ones); a server calling the API sends none.
        client: req.headers.origin ? 'web' : 'api',
      });
      const answered = respond({ ...s, events: whileLeased(s.events, lease) });
      return clamped ? { ...answered, headers: { ...answered.headers, 'x-docent-clamped': clamped } } : answered;
    } catch (err) {
      lease.release();
      throw err;
    }
  };
  const search = (req: RestRequest<unknown, 'assistant'>, input: SearchRequestBody) => {
    const remoteAddress = clientIp(req.remoteAddress, req.headers['x-forwarded-for'], deps.config.trustedProxies);
    return deps.assistant.search(req.caller, req.params.domain!, input, { signal: req.signal, remoteAddress, via: 'api' });
  };
  return [
    route({
      method: 'POST',
      path: '/discovery/v2/assistant/{domain}/message',
      summary: 'Answer a message from the docs, streamed as an AI SDK 5+ UI message stream (SSE)',
      auth: 'assistant',
      cors,
      body: restAssistantRequestV2,
      responses: { 200: { description: 'Server-sent events, ending with a finish event that carries threadId, then [DONE]', streamed: 'text/event-stream' } },
      handler: (req) => answer(req, (s) => ({ status: 200, headers: { ...uiMessageStreamHeaders(s.threadId), ...s.limitHeaders }, stream: encodeUiMessageStream(s.events, s) })),
    }),
    route({
      method: 'POST',
      path: '/discovery/v1/assistant/{domain}/message',
      summary: 'Deprecated: answer a message from the docs, streamed as an AI SDK 4 data stream',
      auth: 'assistant',
      cors,
      body: restAssistantRequestV1,
      responses: { 200: { description: 'AI SDK 4 data stream lines, the last one (d:) carrying threadId', streamed: 'text/plain' } },
      handler: (req) => answer(req, (s) => ({ status: 200, headers: { ...dataStreamHeaders(s.threadId), deprecation: 'true', ...s.limitHeaders }, stream: encodeDataStream(s.events, s) })),
    }),
    route({
      method: 'POST',
      path: '/discovery/v1/search/{domain}',
      summary:
        "Search the documentation, answered in Mintlify's shape: an array of {content, path, metadata}, best first (metadata: title, url, headings, score); the search's id is the X-Search-Id header. docent's own shape is POST …/search/{domain}/results",
      auth: 'assistant',
      cors,
      body: mintlifySearchRequest,
      responses: { 200: { description: 'Passages, best first', json: mintlifySearchBody } },
      handler: async (req) => {
        // Mintlify takes any query string: one with nothing to search for finds nothing, it is not refused.
        if (!req.body.query.trim()) return { status: 200, body: [] };
        const { passages, headers, searchId } = await search(req, { ...req.body, query: req.body.query.trim().slice(0, maxSearchQueryChars) });
        return {
          status: 200,
          headers: { ...headers, ...(searchId && { 'x-search-id': searchId }) },
          body: passages.map(({ path, url, title, headings, content, score }) => ({ content, path, metadata: { title, url, headings, score } })),
        };
      },
    }),
    route({
      method: 'POST',
      path: '/discovery/v1/search/{domain}/results',
      summary: "Search the documentation in docent's shape: {results, searchId}, passages scored 0..1 against the best match (scoreThreshold leaves out lower ones)",
      auth: 'assistant',
      cors,
      body: searchRequest,
      responses: { 200: { description: 'Passages, best first', json: searchResultsBody } },
      handler: async (req) => {
        const { passages, headers, searchId } = await search(req, req.body);
        return { status: 200, headers, body: { results: passages.map(({ path, url, title, headings, content, score }) => ({ path, url, title, headings, content, score })), searchId } };
      },
    }),
    route({
      method: 'POST',
      path: '/discovery/v1/search/{domain}/click',
      summary: 'Report that a reader opened a search result: the searchId the search returned and the path opened (analytics click-through)',
      auth: 'assistant',
      cors,
      body: searchClickRequest,
      responses: { 204: { description: 'Recorded', streamed: 'text/plain' } },
      handler: async (req) => {
        deps.assistant.authorize(req.caller, req.params.domain!);
        await deps.assistant.searchLog.click(req.params.domain!, req.body.searchId, req.body.path);
        return { status: 204 };
      },
    }),
    route({
      method: 'POST',
      path: '/discovery/v1/page/{domain}',
      summary: "A page's Markdown by its path; a page the key's groups do not cover is 404 like an unknown one",
      auth: 'assistant',
      cors,
      body: pageRequest,
      responses: {
        200: { description: 'The page path and its Markdown', json: pageBody },
        404: { description: "No such page (or one the key's groups do not cover), or no docs for the domain: Mintlify's `message` beside docent's error shape", json: pageNotFoundBody },
      },
      handler: async (req) => {
        const remoteAddress = clientIp(req.remoteAddress, req.headers['x-forwarded-for'], deps.config.trustedProxies);
        try {
          const page = await deps.assistant.getPage(req.caller, req.params.domain!, req.body.path, { remoteAddress, groups: req.body.groups });
          return { status: 200, headers: page.headers, body: { path: page.path, content: page.markdown } };
        } catch (err) {
          if (!(err instanceof AppError) || err.code !== 'not_found') throw err;
          return { status: 404, body: { error: err.message, code: 'not_found', message: err.message } };
        }
      },
    }),
    route({
      method: 'POST',
      path: '/discovery/v1/assistant/{domain}/feedback',
      summary: "Rate an answer up or down, with an optional comment; stored on the thread's turn",
      auth: 'assistant',
      cors,
      body: feedbackRequest,
      responses: { 204: { description: 'Stored', streamed: 'text/plain' } },
      handler: async (req) => {
        await deps.assistant.recordFeedback(req.caller, req.params.domain!, req.body);
        return { status: 204 };
      },
    }),
    route({
      method: 'GET',
      path: '/discovery/v1/assistant/{domain}/origin',
      summary: "Whether the calling page's Origin may call the assistant of this domain (the embedded widget explains a refused origin with it)",
      auth: 'none',
      cors: publicCors,
      responses: { 200: { description: 'The Origin header as received, and whether the project allows it', json: originCheckBody } },
      handler: async (req) => {
        // A refused preflight is unreadable to a page; this answer, readable from anywhere, says why the call failed.
        const origin = typeof req.headers.origin === 'string' ? req.headers.origin.slice(0, 200) : '';
        const allowed = origin === '' || isSameOrigin(origin, req.headers.host) || cors.kind === 'public' || (await cors.allows(origin, { domain: req.params.domain! }));
        return { status: 200, headers: { 'cache-control': 'no-store' }, body: { origin, allowed } };
      },
    }),
    ...(['llms.txt', 'llms-full.txt'] as const).map((file) => llmsRoute(deps, file)),
  ];
}

/** `GET /discovery/v1/llms/{domain}/<file>`: public, so it lists public pages only (src/docs/llms-service.ts). */
function llmsRoute(deps: Deps, file: LlmsFile): Route {
  return route({
    method: 'GET',
    path: `/discovery/v1/llms/{domain}/${file}`,
    summary: file === 'llms.txt' ? 'llms.txt (llmstxt.org) of the public docs: a link per page, by section' : 'llms-full.txt: the public docs pages themselves, as Markdown',
    auth: 'none',
    cors: publicCors,
    responses: { 200: { description: 'Markdown, as llmstxt.org describes', streamed: 'text/plain' } },
    handler: async (req) => {
      const doc = await deps.llms.get(req.params.domain!, file);
      const etag = `"${doc.version}"`;
      // Caches ask again each time (a 304 while the ETag holds), so a page a sync withdrew is not served from them.
      const headers = { 'content-type': 'text/plain; charset=utf-8', etag, 'cache-control': 'public, no-cache' };
      if (req.headers['if-none-match'] === etag) return { status: 304, headers };
      return {
        status: 200,
        headers,
        stream: (async function* () {
          yield doc.text;
        })(),
      };
    },
  });
}
