import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ApiReply, anthropicMessages, chatFields, imagePartsOf, type ModelApi, openAiResponses, toChatRequest, unknownField, validateAnthropic, validateResponses } from './model-apis';

/** One scripted model reply: text (sent in the given chunks), tool calls, or both; or a failure of the provider. */
export interface ScriptedTurn {
  text?: string | string[];
  toolCalls?: Array<{ name: string; args: unknown }>;
  /** Wait before the first chunk (or, unstreamed, before the answer), as a slow provider would. */
  firstChunkDelayMs?: number;
  /** Wait between chunks. */
  chunkDelayMs?: number;
  /** Answer with this HTTP error instead, in the API's own error shape (429 carries `retry-after`). */
  error?: { status: 429 | 500 | 503; retryAfterSeconds?: number };
  /**
   * Stall until the client hangs up: streamed, after the first text piece (mid-answer; the first event when there is
   * no text); unstreamed, after the headers.
   */
  stall?: boolean;
  /** Leave token usage out of the answer, as some providers and proxies do. */
  omitUsage?: boolean;
}

/** A request in chat-completions form, whatever API it came through: scripts read `messages` alike. */
export interface ChatRequest {
  model: string;
  messages: Array<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }>;
  stream?: boolean;
  tools?: Array<{ type: string; function: { name: string; parameters: unknown } }>;
  /** Which API the request came through. */
  api?: ModelApi;
  /** When it arrived (ms since the epoch), to see how long a client waited before asking again. */
  receivedAt?: number;
  /** The user messages' image parts as the API shapes them (`image_url`, `input_image` or `image`), bytes and all. */
  imageParts?: Array<Record<string, any>>;
  [key: string]: unknown;
}

/** The settings that point docent at a scripted model (its OpenAI-compatible endpoint, model id and key). */
export function modelSettings(model: Pick<ScriptedModel, 'baseUrl' | 'apiKey' | 'modelId'>): Record<string, string> {
  return { DOCENT_MODEL_PROVIDER: 'openai-compatible', DOCENT_MODEL: model.modelId, DOCENT_MODEL_BASE_URL: model.baseUrl, DOCENT_MODEL_API_KEY: model.apiKey };
}

export interface ScriptedModel {
  /** Base URL to configure as DOCENT_MODEL_BASE_URL (OpenAI-compatible). */
  baseUrl: string;
  /** DOCENT_MODEL_BASE_URL for DOCENT_MODEL_PROVIDER=openai (the Responses API) and =anthropic (Messages). */
  openaiBaseUrl: string;
  anthropicBaseUrl: string;
  apiKey: string;
  modelId: string;
  /** Every well-formed request, in order. */
  requests: ChatRequest[];
  /** Requests refused for not matching the API, with the reason; tests expect this to stay empty. */
  rejected: string[];
  /** Indexes (in `requests`) of stalled answers whose client hung up: a call docent cancelled. */
  hungUp: number[];
  /** Says that refusals matching `pattern` are what the test provokes; close() accepts them. */
  expectRefusals(pattern: RegExp): void;
  /** Stops the server; rejects when it refused a request the test did not say it would, so no refusal passes unseen. */
  close(): Promise<void>;
}

const roles = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** What OpenAI says of a user message's content parts: text, or an image as a data URL of a type it reads, or https. */
function contentPartProblem(part: unknown): string | null {
  const p = part as { type?: string; text?: unknown; image_url?: { url?: unknown } };
  if (p?.type === 'text') return typeof p.text === 'string' ? null : 'text parts need text';
  if (p?.type !== 'image_url') return `invalid content part type "${String(p?.type)}"`;
  const url = p.image_url?.url;
  if (typeof url !== 'string') return 'image_url parts need image_url.url';
  if (/^https:\/\//.test(url)) return null;
  const head = /^data:image\/(png|jpeg|webp|gif);base64,/.exec(url);
  // Megabytes of base64 are checked by a round trip, not a regular expression (whose backtracking would not fit the stack).
  const b64 = head ? url.slice(head[0].length) : '';
  const valid = b64.length > 0 && Buffer.from(b64, 'base64').toString('base64') === b64;
  return valid ? null : 'Invalid image_url: expected a base64 data URL of a PNG, JPEG, WebP or GIF image, or an https URL';
}

/** What OpenAI's chat completions endpoint would refuse, in its own words where possible. */
function validate(body: ChatRequest, modelId: string): string | null {
  if (typeof body !== 'object' || body === null) return 'body must be a JSON object';
  const unknown = unknownField(body, chatFields);
  if (unknown) return `Unrecognized request argument supplied: ${unknown}`;
  if (body.model !== modelId) return `model "${String(body.model)}" does not exist`;
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages must be a non-empty array';
  // Every tool call is answered by a tool message before the next other message, and every tool message answers one.
  let unanswered = new Set<string>();
  for (const m of body.messages) {
    if (!roles.has(m.role)) return `invalid role "${m.role}"`;
    if (m.role === 'tool' && typeof m.tool_call_id !== 'string') return 'tool messages need tool_call_id';
    if (m.role === 'tool' && !unanswered.delete(m.tool_call_id!)) return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
    if (m.role !== 'tool' && unanswered.size > 0) {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...unanswered].join(', ')}`;
    }
    if (m.role === 'assistant' && Array.isArray(m.tool_calls)) unanswered = new Set((m.tool_calls as Array<{ id: string }>).map((c) => c.id));
    if (m.role !== 'assistant' && m.content === undefined) return `${m.role} message without content`;
    if (m.role === 'user' && Array.isArray(m.content)) {
      const problem = m.content.map(contentPartProblem).find(Boolean);
      if (problem) return problem;
    }
  }
  if (unanswered.size > 0)
    return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...unanswered].join(', ')}`;
  for (const t of body.tools ?? []) {
    if (t.type !== 'function' || typeof t.function?.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(t.function.name)) {
      return 'each tool must be {type:"function", function:{name, parameters}} with a valid name';
    }
    if (typeof t.function.parameters !== 'object') return `tool ${t.function.name}: parameters must be a JSON schema object`;
  }
  return null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits like a slow provider, but stops waiting when the client hangs up (a cancelled call, a closed server). */
function stall(ms: number, res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    res.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** The chat-completions answer (streamed or not) for one scripted turn; a stream reports usage only when asked to. */
function chatCompletions(turn: ScriptedTurn, index: number, modelId: string, streamUsage: boolean): ApiReply {
  const id = `chatcmpl-${index}`;
  const created = Math.floor(Date.now() / 1000);
  const pieces = turn.text === undefined ? [] : Array.isArray(turn.text) ? turn.text : [turn.text];
  const toolCalls = (turn.toolCalls ?? []).map((c, i) => ({ id: `call_${index}_${i}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } }));
  const finishReason = toolCalls.length ? 'tool_calls' : 'stop';
  const usage = turn.omitUsage ? undefined : { prompt_tokens: 10, completion_tokens: pieces.length + toolCalls.length, total_tokens: 10 + pieces.length + toolCalls.length };
  const chunk = (delta: object, finish: string | null = null) => ({ id, object: 'chat.completion.chunk', created, model: modelId, choices: [{ index: 0, delta, finish_reason: finish }] });
  return {
    whole: {
      id,
      object: 'chat.completion',
      created,
      model: modelId,
      choices: [{ index: 0, message: { role: 'assistant', content: pieces.join('') || null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) }, finish_reason: finishReason }],
      ...(usage ? { usage } : {}),
    },
    events: [
      { data: chunk({ role: 'assistant', content: '' }) },
      ...pieces.map((piece) => ({ data: chunk({ content: piece }), piece: true })),
      ...toolCalls.map((c, i) => ({ data: chunk({ tool_calls: [{ index: i, ...c }] }) })),
      { data: chunk({}, finishReason) },
      // OpenAI sends the usage chunk only for `stream_options: { include_usage: true }`.
      ...(usage && streamUsage ? [{ data: { id, object: 'chat.completion.chunk', created, model: modelId, choices: [], usage } }] : []),
    ],
    done: 'data: [DONE]\n\n',
  };
}

/** A provider's error body, as each API shapes it. */
function errorBody(api: ModelApi, status: number, message: string): object {
  if (api === 'messages') return { type: 'error', error: { type: status === 429 ? 'rate_limit_error' : status === 529 ? 'overloaded_error' : 'api_error', message } };
  return { error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'server_error', code: null } };
}

/**
 * A stand-in for a paid model provider over real HTTP: OpenAI chat completions (`/chat/completions`, what
 * openai-compatible servers speak), the OpenAI Responses API (`/v1/responses`) and Anthropic Messages (`/v1/messages`),
 * streamed or not, with tool calls. It answers from a script and refuses what the real API would refuse (wrong key,
 * unknown model, malformed messages, a tool result that answers no call); a script turn may also fail as a provider
 * does (429 with retry-after, 5xx, a stalled stream, no usage).
 */
export async function startScriptedModel(
  script: ScriptedTurn[] | ((req: ChatRequest, index: number) => ScriptedTurn),
  opts: { modelId?: string; apiKey?: string; otherModelIds?: string[] } = {},
): Promise<ScriptedModel> {
  const modelId = opts.modelId ?? 'scripted-model';
  // Models the provider also serves, as an account with several models would: a request names one, the answer echoes it.
  const modelIds = [modelId, ...(opts.otherModelIds ?? [])];
  const apiKey = opts.apiKey ?? 'sk-test-scripted';
  const requests: ChatRequest[] = [];
  const rejected: string[] = [];
  const hungUp: number[] = [];
  const expected: RegExp[] = [];
  let turnIndex = 0;

  const fail = (res: http.ServerResponse, api: ModelApi, status: number, message: string) => {
    rejected.push(message);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        api === 'messages' ? { type: 'error', error: { type: status === 401 ? 'authentication_error' : 'invalid_request_error', message } } : { error: { message, type: 'invalid_request_error' } },
      ),
    );
  };

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    // The models it serves, as OpenAI-compatible servers list them (`docent local-model` asks here for a default).
    if (req.method === 'GET' && req.url === '/models') {
      if (req.headers.authorization !== `Bearer ${apiKey}`) return fail(res, 'chat', 401, 'Incorrect API key provided');
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ object: 'list', data: modelIds.map((id) => ({ id, object: 'model', owned_by: 'scripted' })) }));
    }
    const api: ModelApi | undefined = req.url === '/chat/completions' ? 'chat' : req.url === '/v1/responses' ? 'responses' : req.url === '/v1/messages' ? 'messages' : undefined;
    if (req.method !== 'POST' || !api) return fail(res, 'chat', 404, `unknown endpoint ${req.method} ${req.url}`);
    if (api === 'messages') {
      if (req.headers['x-api-key'] !== apiKey) return fail(res, api, 401, 'invalid x-api-key');
      if (typeof req.headers['anthropic-version'] !== 'string') return fail(res, api, 400, 'anthropic-version: header is required');
    } else if (req.headers.authorization !== `Bearer ${apiKey}`) return fail(res, api, 401, 'Incorrect API key provided');
    let raw: Record<string, unknown>;
    try {
      raw = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return fail(res, api, 400, 'body is not JSON');
    }
    const servedBy = typeof raw.model === 'string' && modelIds.includes(raw.model) ? raw.model : modelId;
    const problem = api === 'chat' ? validate(raw as ChatRequest, servedBy) : api === 'responses' ? validateResponses(raw, servedBy) : validateAnthropic(raw, servedBy);
    if (problem) return fail(res, api, 400, problem);
    const body: ChatRequest = { ...(api === 'chat' ? (raw as ChatRequest) : toChatRequest(api, raw)), api, receivedAt: Date.now(), imageParts: imagePartsOf(api, raw) };
    requests.push(body);
    const index = turnIndex++;
    const turn = typeof script === 'function' ? script(body, index) : script[index];
    if (!turn) return fail(res, api, 500, `script has no turn ${index}`);

    if (turn.error) {
      const { status, retryAfterSeconds } = turn.error;
      res.writeHead(status, { 'content-type': 'application/json', ...(retryAfterSeconds !== undefined ? { 'retry-after': String(retryAfterSeconds) } : {}) });
      res.end(JSON.stringify(errorBody(api, status, status === 429 ? 'Rate limit reached; try again later.' : 'The server had an error while processing your request.')));
      return;
    }
    const streamUsage = (raw.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    const reply = api === 'chat' ? chatCompletions(turn, index, servedBy, streamUsage) : api === 'responses' ? openAiResponses(turn, index, servedBy) : anthropicMessages(turn, index, servedBy);

    if (!body.stream) {
      // A slow provider is slow whether or not the client streams.
      if (turn.firstChunkDelayMs) await stall(turn.firstChunkDelayMs, res);
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      if (turn.stall) {
        await stall(2 ** 31 - 1, res);
        return void hungUp.push(requests.indexOf(body));
      }
      res.end(JSON.stringify(reply.whole));
      return;
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (turn.firstChunkDelayMs) await stall(turn.firstChunkDelayMs, res);
    if (res.destroyed) return void hungUp.push(requests.indexOf(body));
    let pieces = 0;
    const stallAfter = turn.stall
      ? Math.max(
          0,
          reply.events.findIndex((e) => e.piece),
        )
      : -1;
    for (const [i, event] of reply.events.entries()) {
      if (res.destroyed) return;
      if (event.piece && pieces++ > 0 && turn.chunkDelayMs) await sleep(turn.chunkDelayMs);
      res.write(`${event.event ? `event: ${event.event}\n` : ''}data: ${JSON.stringify(event.data)}\n\n`);
      if (i === stallAfter) {
        await stall(2 ** 31 - 1, res);
        return void hungUp.push(requests.indexOf(body));
      }
    }
    res.end(reply.done ?? '');
  });

  // Idle keep-alive sockets stay open longer than a client's pool keeps them (node's 5 s default raced the pool: a
  // request sent on a socket the server was closing failed with "other side closed" under 1,000 streams, bench/streams-1000.ts).
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', 1024, r));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  return {
    baseUrl: base,
    openaiBaseUrl: `${base}/v1`,
    anthropicBaseUrl: `${base}/v1`,
    apiKey,
    modelId,
    requests,
    rejected,
    hungUp,
    expectRefusals: (pattern) => void expected.push(pattern),
    close: async () => {
      await new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      });
      const unexpected = rejected.filter((message) => !expected.some((p) => p.test(message)));
      if (unexpected.length) throw new Error(`the model double refused requests the test did not expect:\n${unexpected.join('\n')}`);
    },
  };
}
