import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AssistantService } from '../assistant/service';
import type { Caller } from '../auth/api-keys';
import { AppError } from '../errors';
import type { Logger } from '../log';

/** Who is asking, on which domain, from where: one MCP request's identity. */
export interface McpCallContext {
  caller: Caller;
  domain: string;
  remoteAddress?: string;
  signal: AbortSignal;
}

const text = (t: string, structured?: Record<string, unknown>): CallToolResult => ({ content: [{ type: 'text', text: t }], ...(structured ? { structuredContent: structured } : {}) });

/**
 * The MCP server of one docs domain, for one request (stateless Streamable HTTP): search_docs, get_page and ask_docs
 * over the same service as the REST and Connect paths, with the caller's key, limits and groups.
 */
export function docsMcpServer(assistant: AssistantService, log: Logger, ctx: McpCallContext): McpServer {
  const server = new McpServer({ name: `docent docs of ${ctx.domain}`, version: '1.0.0' });

  // Refusals (rate limits, unknown pages) are tool errors the model can read; anything else is logged, never shown.
  const guarded = async (work: () => Promise<CallToolResult>): Promise<CallToolResult> => {
    try {
      return await work();
    } catch (err) {
      if (err instanceof AppError) return { isError: true, content: [{ type: 'text', text: err.message }] };
      log.error({ err, domain: ctx.domain }, 'MCP tool call failed');
      return { isError: true, content: [{ type: 'text', text: 'docent could not answer this call; try again later' }] };
    }
  };

  server.registerTool(
    'search_docs',
    {
      title: 'Search the documentation',
      description: `Searches the documentation of ${ctx.domain} and returns the best matching passages, each with its page title, path and URL.`,
      inputSchema: {
        query: z.string().trim().min(1).max(2000).describe('What to look for, in words or exact names'),
        pageSize: z.number().int().min(1).max(50).optional().describe('How many passages (1-50, default 10)'),
        scoreThreshold: z.number().min(0).max(1).optional().describe('Leave out passages scoring below this (0-1; the best match scores 1)'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ query, pageSize, scoreThreshold }) =>
      guarded(async () => {
        const { passages } = await assistant.search(ctx.caller, ctx.domain, { query, pageSize, scoreThreshold }, { signal: ctx.signal, remoteAddress: ctx.remoteAddress, via: 'mcp' });
        const results = passages.map(({ path, url, title, headings, content, score }) => ({ title, path, url, headings, content, score }));
        const body = results.map((r, i) => `[${i + 1}] ${[r.title, ...r.headings].join(' › ')}\npath: ${r.path}\nurl: ${r.url}\n\n${r.content}`).join('\n\n---\n\n');
        return text(body || 'No passages match.', { results });
      }),
  );

  server.registerTool(
    'get_page',
    {
      title: 'Read a documentation page',
      description: `Returns one page of the documentation of ${ctx.domain} as Markdown, by its path (as search_docs gives it, e.g. commands/npm-ci).`,
      inputSchema: { path: z.string().trim().min(1).max(500).describe('The page path, without file extension') },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ path }) =>
      guarded(async () => {
        const page = await assistant.getPage(ctx.caller, ctx.domain, path, { remoteAddress: ctx.remoteAddress });
        return text(page.markdown, { path: path.trim(), url: page.url, title: page.title });
      }),
  );

  server.registerTool(
    'ask_docs',
    {
      title: 'Ask the documentation',
      description: `Answers a question from the documentation of ${ctx.domain}, citing passages as [n]; says so when the docs do not cover it.`,
      inputSchema: { question: z.string().trim().min(1).max(8192).describe('The question, in plain words') },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ question }) =>
      guarded(async () => {
        const session = await assistant.startAnswer({
          caller: ctx.caller,
          domain: ctx.domain,
          question: { fp: 'mcp', question, clientHistory: [], retrievalPageSize: 5, context: [] },
          remoteAddress: ctx.remoteAddress,
          signal: ctx.signal,
          client: 'other',
        });
        let answer = '';
        const sources: Array<{ id: string; title: string; url: string; path: string }> = [];
        for await (const e of session.events) {
          if (e.type === 'text') answer += e.delta;
          else if (e.type === 'source') sources.push(e.source);
        }
        const cited = sources.length ? `\n\nSources:\n${sources.map((s) => `[${s.id}] ${s.title}: ${s.url}`).join('\n')}` : '';
        return text(answer + cited, { answer, sources, threadId: session.threadId, messageId: session.messageId });
      }),
  );
  return server;
}
