import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { z } from 'zod';
import type { Deps } from '../deps';
import { AppError } from '../errors';
import { clientIp } from '../limits/client-ip';
import { docsMcpServer } from '../mcp/docs-server';
import { projectOrigins } from '../edge/cors';
import { route, type RestRequest, type RestResponse, type Route } from './router';

/** Messages one JSON-RPC batch may hold: the whole batch runs on one stream slot. */
export const maxMcpBatch = 10;
/** `ask_docs` calls (each a model answer) one request may make. */
export const maxMcpAnswersPerRequest = 1;

// A JSON-RPC 2.0 message or a batch of them; the MCP SDK checks the rest.
const jsonRpcMessage = z.looseObject({ jsonrpc: z.literal('2.0') });
const isAnswerCall = (m: Record<string, unknown>) => m.method === 'tools/call' && (m.params as { name?: unknown } | undefined)?.name === 'ask_docs';
// Checked once the shape is known, so the caller reads which cap the batch broke.
const mcpBody = z.union([jsonRpcMessage, z.array(jsonRpcMessage).min(1)], { error: 'must be a JSON-RPC 2.0 message ("jsonrpc": "2.0") or a batch of them' }).superRefine((body, ctx) => {
  if (!Array.isArray(body)) return;
  if (body.length > maxMcpBatch) ctx.addIssue({ code: 'custom', message: `a JSON-RPC batch may hold at most ${maxMcpBatch} messages` });
  else if (body.filter(isAnswerCall).length > maxMcpAnswersPerRequest) {
    ctx.addIssue({ code: 'custom', message: `a JSON-RPC batch may call ask_docs at most ${maxMcpAnswersPerRequest} time; send the others as requests of their own` });
  }
});

// What the MCP transport reads of a request; the body is already parsed and the key already checked.
const forwardedHeaders = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id'];

/** The MCP SDK's answer as a REST response; its own refusals (bad Accept, malformed JSON-RPC) in the one error shape. */
async function toRestResponse(res: Response): Promise<RestResponse> {
  const body = await res.text();
  if (res.status >= 400) {
    let message = 'the MCP request is malformed';
    try {
      message = (JSON.parse(body) as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      // not JSON-RPC: keep the generic message
    }
    throw new AppError('invalid_argument', message.replace(/^[^:]*Error: /, ''));
  }
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (name === 'content-type' || name.startsWith('mcp-')) headers[name] = value;
  });
  return {
    status: res.status,
    headers,
    stream: (async function* () {
      if (body) yield body;
    })(),
  };
}

/** `POST /mcp/{domain}`: the docs as an MCP server (Streamable HTTP, stateless: one server and transport per request). */
export function mcpRoutes(deps: Deps): Route[] {
  return [
    route({
      method: 'POST',
      path: '/mcp/{domain}',
      summary: 'MCP server of the docs (Streamable HTTP, stateless): tools search_docs, get_page and ask_docs',
      auth: 'assistant',
      cors: projectOrigins(deps.tenancy),
      body: mcpBody,
      responses: { 200: { description: 'A JSON-RPC response', streamed: 'application/json' }, 202: { description: 'A notification or response was accepted', streamed: 'application/json' } },
      handler: async (req: RestRequest<z.infer<typeof mcpBody>, 'assistant'>) => {
        const domain = req.params.domain!;
        deps.assistant.authorize(req.caller, domain);
        const remoteAddress = clientIp(req.remoteAddress, req.headers['x-forwarded-for'], deps.config.trustedProxies);
        // One of the key's stream slots, like the assistant's other streams: answers run as long as theirs do.
        const lease = deps.streams.acquire(req.caller, req.signal);
        const server = docsMcpServer(deps.assistant, deps.log, { caller: req.caller, domain, remoteAddress, signal: lease.signal });
        // No sessions: every request carries the key, so any gateway replica can serve any request.
        const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        await server.connect(transport);
        try {
          const headers = new Headers();
          for (const name of forwardedHeaders) {
            const value = req.headers[name];
            if (typeof value === 'string') headers.set(name, value);
          }
          const request = new Request(`http://docent/mcp/${encodeURIComponent(domain)}`, { method: 'POST', headers, body: JSON.stringify(req.body) });
          return await toRestResponse(await transport.handleRequest(request, { parsedBody: req.body }));
        } finally {
          await server.close();
          lease.release();
        }
      },
    }),
  ];
}
