import { encodeDataStream, dataStreamHeaders } from '../assistant/data-stream';
import { assistantRequestV1, assistantRequestV2, searchRequest, toQuestion } from '../assistant/request';
import { encodeUiMessageStream, uiMessageStreamHeaders } from '../assistant/ui-message-stream';
import type { Deps } from '../deps';
import { clientIp } from '../limits/client-ip';
import { projectOrigins } from './cors';
import { route, type RestRequest, type Route } from './router';

/** REST paths of the documentation assistant and search (DESIGN.md "Assistant response streams", "Documentation search"). */
export function assistantRoutes(deps: Deps): Route[] {
  // The assistant key is public: browsers may call only from the project's allowed origins.
  const cors = projectOrigins(deps.tenancy);
  const start = (req: RestRequest<Parameters<typeof toQuestion>[0]>) =>
    deps.assistant.startAnswer({
      authorization: req.headers.authorization,
      domain: req.params.domain!,
      question: toQuestion(req.body),
      remoteAddress: clientIp(req.remoteAddress, req.headers['x-forwarded-for'], deps.config.trustedProxies),
      signal: req.signal,
    });
  return [
    route({
      method: 'POST',
      path: '/discovery/v2/assistant/{domain}/message',
      summary: 'Answer a message from the docs, streamed as an AI SDK 5+ UI message stream (SSE)',
      auth: 'assistant',
      cors,
      body: assistantRequestV2,
      handler: async (req) => {
        const s = await start(req);
        return { status: 200, headers: { ...uiMessageStreamHeaders(s.threadId), ...s.limitHeaders }, stream: encodeUiMessageStream(s.events, s) };
      },
    }),
    route({
      method: 'POST',
      path: '/discovery/v1/assistant/{domain}/message',
      summary: 'Deprecated: answer a message from the docs, streamed as an AI SDK 4 data stream',
      auth: 'assistant',
      cors,
      body: assistantRequestV1,
      handler: async (req) => {
        const s = await start(req);
        return { status: 200, headers: { ...dataStreamHeaders(s.threadId), deprecation: 'true', ...s.limitHeaders }, stream: encodeDataStream(s.events, s) };
      },
    }),
    route({
      method: 'POST',
      path: '/discovery/v1/search/{domain}',
      summary: 'Search the documentation: passages best first',
      auth: 'assistant',
      cors,
      body: searchRequest,
      handler: async (req) => {
        const passages = await deps.assistant.search(req.headers.authorization, req.params.domain!, req.body, req.signal);
        return { status: 200, body: { results: passages.map(({ path, url, title, headings, content, score }) => ({ path, url, title, headings, content, score })) } };
      },
    }),
  ];
}
