import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted model reply: text (sent in the given chunks), tool calls, or both. */
export interface ScriptedTurn {
  text?: string | string[];
  toolCalls?: Array<{ name: string; args: unknown }>;
  /** Wait before the first chunk (or, unstreamed, before the answer), as a slow provider would. */
  firstChunkDelayMs?: number;
  /** Wait between chunks. */
  chunkDelayMs?: number;
}

export interface ChatRequest {
  model: string;
  messages: Array<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }>;
  stream?: boolean;
  tools?: Array<{ type: string; function: { name: string; parameters: unknown } }>;
  [key: string]: unknown;
}

export interface ScriptedModel {
  /** Base URL to configure as DOCENT_MODEL_BASE_URL (OpenAI-compatible). */
  baseUrl: string;
  apiKey: string;
  modelId: string;
  /** Every well-formed request, in order. */
  requests: ChatRequest[];
  /** Requests refused for not matching the API, with the reason; tests expect this to stay empty. */
  rejected: string[];
  close(): Promise<void>;
}

const roles = new Set(['system', 'user', 'assistant', 'tool']);

/** What OpenAI says of a user message's content parts: text, or an image as a data URL of a type it reads, or https. */
function contentPartProblem(part: unknown): string | null {
  const p = part as { type?: string; text?: unknown; image_url?: { url?: unknown } };
  if (p?.type === 'text') return typeof p.text === 'string' ? null : 'text parts need text';
  if (p?.type !== 'image_url') return `invalid content part type "${String(p?.type)}"`;
  const url = p.image_url?.url;
  if (typeof url !== 'string') return 'image_url parts need image_url.url';
  if (/^https:\/\//.test(url)) return null;
  const data = /^data:image\/(png|jpeg|webp|gif);base64,([A-Za-z0-9+/]+={0,2})$/.exec(url);
  return data ? null : 'Invalid image_url: expected a base64 data URL of a PNG, JPEG, WebP or GIF image, or an https URL';
}

/** What OpenAI's chat completions endpoint would refuse, in its own words where possible. */
function validate(body: ChatRequest, modelIds: string[]): string | null {
  if (typeof body !== 'object' || body === null) return 'body must be a JSON object';
  if (!modelIds.includes(body.model)) return `model "${String(body.model)}" does not exist`;
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages must be a non-empty array';
  for (const m of body.messages) {
    if (!roles.has(m.role)) return `invalid role "${m.role}"`;
    if (m.role === 'tool' && typeof m.tool_call_id !== 'string') return 'tool messages need tool_call_id';
    if (m.role !== 'assistant' && m.content === undefined) return `${m.role} message without content`;
    if (m.role === 'user' && Array.isArray(m.content)) {
      const problem = m.content.map(contentPartProblem).find(Boolean);
      if (problem) return problem;
    }
  }
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

/**
 * A stand-in for a paid model provider: an OpenAI-compatible `/chat/completions` endpoint over real HTTP that
 * answers from a script and refuses what the real API would refuse (wrong key, unknown model, malformed messages).
 */
export async function startScriptedModel(
  script: ScriptedTurn[] | ((req: ChatRequest, index: number) => ScriptedTurn),
  opts: { modelId?: string; apiKey?: string; otherModelIds?: string[] } = {},
): Promise<ScriptedModel> {
  const modelId = opts.modelId ?? 'scripted-model';
  // Models the provider also serves, as an account with several models would.
  const modelIds = [modelId, ...(opts.otherModelIds ?? [])];
  const apiKey = opts.apiKey ?? 'sk-test-scripted';
  const requests: ChatRequest[] = [];
  const rejected: string[] = [];
  let turnIndex = 0;

  const fail = (res: http.ServerResponse, status: number, message: string) => {
    rejected.push(message);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message, type: 'invalid_request_error' } }));
  };

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method !== 'POST' || req.url !== '/chat/completions') return fail(res, 404, `unknown endpoint ${req.method} ${req.url}`);
    if (req.headers.authorization !== `Bearer ${apiKey}`) return fail(res, 401, 'Incorrect API key provided');
    let body: ChatRequest;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
    } catch {
      return fail(res, 400, 'body is not JSON');
    }
    const problem = validate(body, modelIds);
    if (problem) return fail(res, 400, problem);
    requests.push(body);
    const index = turnIndex++;
    const turn = typeof script === 'function' ? script(body, index) : script[index];
    if (!turn) return fail(res, 500, `script has no turn ${index}`);

    const id = `chatcmpl-${index}`;
    const servedBy = body.model;
    const created = Math.floor(Date.now() / 1000);
    const pieces = turn.text === undefined ? [] : Array.isArray(turn.text) ? turn.text : [turn.text];
    const toolCalls = (turn.toolCalls ?? []).map((c, i) => ({ id: `call_${index}_${i}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } }));
    const finishReason = toolCalls.length ? 'tool_calls' : 'stop';
    const usage = { prompt_tokens: 10, completion_tokens: pieces.length + toolCalls.length, total_tokens: 10 + pieces.length + toolCalls.length };

    if (!body.stream) {
      // A slow provider is slow whether or not the client streams.
      if (turn.firstChunkDelayMs) await stall(turn.firstChunkDelayMs, res);
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model: servedBy,
          choices: [{ index: 0, message: { role: 'assistant', content: pieces.join('') || null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) }, finish_reason: finishReason }],
          usage,
        }),
      );
      return;
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (delta: object, finish: string | null = null, extra: object = {}) =>
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: servedBy, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`);
    if (turn.firstChunkDelayMs) await stall(turn.firstChunkDelayMs, res);
    send({ role: 'assistant', content: '' });
    for (const [i, piece] of pieces.entries()) {
      if (i > 0 && turn.chunkDelayMs) await sleep(turn.chunkDelayMs);
      send({ content: piece });
    }
    for (const [i, c] of toolCalls.entries()) send({ tool_calls: [{ index: i, ...c }] });
    send({}, finishReason);
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: servedBy, choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  });

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    apiKey,
    modelId,
    requests,
    rejected,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
