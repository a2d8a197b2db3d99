import type { ChatRequest, ScriptedTurn } from './scripted-model';

// The OpenAI Responses API and Anthropic Messages as the scripted model double speaks them: what each refuses, how a
// request reads as chat messages (so one script serves every API), and how a scripted turn is answered, whole or as
// the API's own server-sent events.

export type ModelApi = 'chat' | 'responses' | 'messages';

export interface ApiReply {
  /** The unstreamed answer. */
  whole: object;
  /** The streamed answer's events in order; `piece` marks a text delta (the script's chunk delay goes between them). */
  events: Array<{ event?: string; data: object; piece?: boolean }>;
  /** Written after the last event (chat completions end with `[DONE]`). */
  done?: string;
}

type Json = Record<string, any>;
const toolName = /^[a-zA-Z0-9_-]{1,64}$/;

// The request fields each API documents; like the real APIs, the double refuses any other (a misspelt option would
// otherwise pass here and fail in production).
export const chatFields = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'frequency_penalty',
  'presence_penalty',
  'stop',
  'seed',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'user',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'n',
  'store',
  'metadata',
  'reasoning_effort',
  'service_tier',
  'prediction',
  'modalities',
  'audio',
  'verbosity',
  'prompt_cache_key',
  'safety_identifier',
  'web_search_options',
]);
const responsesFields = new Set([
  'model',
  'input',
  'instructions',
  'max_output_tokens',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'stream',
  'stream_options',
  'store',
  'previous_response_id',
  'include',
  'text',
  'reasoning',
  'parallel_tool_calls',
  'metadata',
  'user',
  'service_tier',
  'truncation',
  'prompt_cache_key',
  'safety_identifier',
  'top_logprobs',
  'max_tool_calls',
  'background',
  'conversation',
  'prompt',
]);
const anthropicFields = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'stream',
  'tools',
  'tool_choice',
  'metadata',
  'thinking',
  'service_tier',
  'container',
  'mcp_servers',
  'context_management',
]);

/** The first top-level field of a request that its API does not know, if any. */
export function unknownField(body: object, known: ReadonlySet<string>): string | undefined {
  return Object.keys(body).find((k) => !known.has(k));
}

/** Output items this double has answered with, by id: a Responses request may refer back to them (`item_reference`). */
const servedItems = new Map<string, Json>();

/** The image types both APIs read, by the magic numbers of their bytes (as the APIs check a declared type). */
function imageTypeOf(bytes: Buffer): string | null {
  if (bytes.subarray(0, 8).equals(Buffer.from('89504e470d0a1a0a', 'hex'))) return 'image/png';
  if (bytes.subarray(0, 3).equals(Buffer.from('ffd8ff', 'hex'))) return 'image/jpeg';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  if (/^GIF8[79]a/.test(bytes.subarray(0, 6).toString('latin1'))) return 'image/gif';
  return null;
}

/** Base64 that decodes: megabytes are checked by a round trip, not a regular expression (whose backtracking would not fit the stack). */
const isBase64 = (text: unknown): text is string => typeof text === 'string' && text.length > 0 && Buffer.from(text, 'base64').toString('base64') === text;

// Anthropic refuses an image whose base64 is over 5 MB; OpenAI one over 20 MB, or over 50 MB of images in a request.
export const anthropicMaxImageBase64 = 5 * 1024 * 1024;
export const openAiMaxImageBytes = 20 * 1024 * 1024;
const openAiMaxRequestImageBytes = 50 * 1024 * 1024;

/** What the Responses API says of an `input_image` part, or null when it takes it; `bytes` adds up the request's images. */
function responsesImageProblem(part: Json, where: string, bytes: { total: number }): string | null {
  if (part.detail !== undefined && !['low', 'high', 'auto'].includes(part.detail)) return `Invalid value: '${String(part.detail)}' in ${where}.detail.`;
  if (typeof part.file_id === 'string') return null;
  const url = part.image_url;
  if (typeof url !== 'string') return `Missing required parameter: '${where}.image_url'.`;
  if (/^https:\/\//.test(url)) return null;
  const head = /^data:(image\/(?:png|jpeg|webp|gif));base64,/.exec(url);
  const data = head ? url.slice(head[0].length) : '';
  if (!head || !isBase64(data)) return `Invalid '${where}.image_url': expected a base64 data URL of a PNG, JPEG, WebP or GIF image, or an https URL.`;
  const decoded = Buffer.from(data, 'base64');
  if (imageTypeOf(decoded) === null) return `Invalid '${where}.image_url': the image data is not a supported image format.`;
  if (decoded.length > openAiMaxImageBytes) return `Invalid '${where}.image_url': image of ${decoded.length} bytes exceeds the ${openAiMaxImageBytes} byte limit per image.`;
  bytes.total += decoded.length;
  if (bytes.total > openAiMaxRequestImageBytes) return `Invalid 'input': the request's images exceed ${openAiMaxRequestImageBytes} bytes.`;
  return null;
}

/** What Anthropic says of an `image` block, or null when it takes it. */
function anthropicImageProblem(block: Json, where: string): string | null {
  const source = block.source as Json | undefined;
  if (source?.type === 'url') return typeof source.url === 'string' ? null : `${where}.source.url: Field required`;
  if (source?.type !== 'base64') return `${where}.source.type: Input should be 'base64', 'url' or 'file'`;
  if (!['image/jpeg', 'image/png', 'image/gif', 'image/webp'].includes(source.media_type)) {
    return `${where}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`;
  }
  if (!isBase64(source.data)) return `${where}.source.base64.data: invalid base64 data`;
  if (source.data.length > anthropicMaxImageBase64) return `${where}.source.base64: image exceeds 5 MB maximum: ${source.data.length} bytes > ${anthropicMaxImageBase64} bytes`;
  if (imageTypeOf(Buffer.from(source.data, 'base64')) !== source.media_type) return `${where}.source.base64.data: Image does not match the provided media type ${source.media_type}`;
  return null;
}

const piecesOf = (turn: ScriptedTurn) => (turn.text === undefined ? [] : Array.isArray(turn.text) ? turn.text : [turn.text]);

/** What the Responses API would refuse, in its own words where possible. */
export function validateResponses(body: Json, modelId: string): string | null {
  const unknown = unknownField(body, responsesFields);
  if (unknown) return `Unknown parameter: '${unknown}'.`;
  if (body.model !== modelId) return `The requested model '${String(body.model)}' does not exist.`;
  const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  if (!Array.isArray(input) || input.length === 0) return "Invalid 'input': expected a non-empty array of items.";
  const calls = new Set<string>();
  const answered = new Set<string>();
  const imageBytes = { total: 0 };
  for (const [i, item] of input.entries()) {
    const type = item.type ?? (item.role ? 'message' : undefined);
    if (type === 'message') {
      if (!['system', 'developer', 'user', 'assistant'].includes(item.role)) return `Invalid value: '${item.role}'. Supported values are: 'system', 'developer', 'user', and 'assistant'.`;
      if (typeof item.content !== 'string' && !Array.isArray(item.content)) return `Invalid 'input[${i}].content': expected a string or an array of content parts.`;
      for (const [j, part] of (Array.isArray(item.content) ? item.content : []).entries()) {
        const allowed = item.role === 'assistant' ? ['output_text', 'refusal'] : ['input_text', 'input_image', 'input_file'];
        if (!allowed.includes(part.type)) return `Invalid value: '${part.type}' in input[${i}].content for role '${item.role}'.`;
        const problem = part.type === 'input_image' ? responsesImageProblem(part, `input[${i}].content[${j}]`, imageBytes) : null;
        if (problem) return problem;
      }
    } else if (type === 'function_call') {
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string' || typeof item.arguments !== 'string') return `Missing required parameter: 'input[${i}].call_id', 'name' or 'arguments'.`;
      calls.add(item.call_id);
    } else if (type === 'function_call_output') {
      if (!calls.has(item.call_id)) return `No tool call found for function call output with call_id ${String(item.call_id)}.`;
      answered.add(item.call_id);
      if (typeof item.output !== 'string' && !Array.isArray(item.output)) return `Invalid 'input[${i}].output': expected a string.`;
    } else if (type === 'item_reference') {
      const served = servedItems.get(item.id);
      if (!served) return `Item with id '${String(item.id)}' not found.`;
      if (served.type === 'function_call') calls.add(served.call_id);
    } else return `Invalid value: '${String(type)}' in input[${i}].type.`;
  }
  const unanswered = [...calls].find((id) => !answered.has(id));
  if (unanswered) return `No tool output found for function call ${unanswered}.`;
  for (const t of body.tools ?? []) {
    if (t.type !== 'function' || typeof t.name !== 'string' || !toolName.test(t.name)) return "Invalid 'tools': each function tool needs a name matching ^[a-zA-Z0-9_-]{1,64}$.";
    if (typeof t.parameters !== 'object' || t.parameters === null) return `Invalid schema for function '${t.name}': parameters must be a JSON schema object.`;
  }
  return null;
}

/** What Anthropic's Messages API would refuse, in its own words where possible. */
export function validateAnthropic(body: Json, modelId: string): string | null {
  const unknown = unknownField(body, anthropicFields);
  if (unknown) return `${unknown}: Extra inputs are not permitted`;
  if (body.model !== modelId) return `model: ${String(body.model)}`;
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: at least one message is required';
  if (body.messages[0].role !== 'user') return 'messages: first message must use the "user" role';
  let openCalls = new Set<string>();
  for (const [i, m] of body.messages.entries()) {
    if (m.role !== 'user' && m.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    const blocks: Json[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (!Array.isArray(blocks) || blocks.length === 0) return `messages.${i}: all messages must have non-empty content`;
    const uses = new Set<string>();
    const results = new Set(blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id));
    const missing = [...openCalls].find((id) => !results.has(id));
    if (missing) {
      return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
    for (const [j, b] of blocks.entries()) {
      if (b.type === 'text' && typeof b.text !== 'string') return `messages.${i}.content: text blocks need text`;
      if (b.type === 'image') {
        if (m.role !== 'user') return `messages.${i}: image blocks belong to user messages`;
        const problem = anthropicImageProblem(b, `messages.${i}.content.${j}.image`);
        if (problem) return problem;
      }
      if (b.type === 'tool_use') {
        if (m.role !== 'assistant') return `messages.${i}: tool_use blocks belong to assistant messages`;
        uses.add(b.id);
      }
      if (b.type === 'tool_result') {
        if (m.role !== 'user') return `messages.${i}: tool_result blocks belong to user messages`;
        if (!openCalls.has(b.tool_use_id)) {
          return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
      }
    }
    openCalls = uses;
  }
  for (const t of body.tools ?? []) {
    if (typeof t.name !== 'string' || !toolName.test(t.name)) return 'tools: each tool needs a name matching ^[a-zA-Z0-9_-]{1,64}$';
    if (t.input_schema?.type !== 'object') return `tools.${t.name}.input_schema: type must be "object"`;
  }
  return null;
}

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((p: Json) => (typeof p.text === 'string' ? p.text : typeof p === 'string' ? p : p.type === 'input_image' ? '[image]' : JSON.stringify(p))).join('')
      : JSON.stringify(content);

/** The image parts of the request's user messages, exactly as the API shapes them, for tests to read. */
export function imagePartsOf(api: ModelApi, body: Json): Json[] {
  const users: Json[] = api === 'responses' ? (typeof body.input === 'string' ? [] : body.input) : (body.messages ?? []);
  const kind = api === 'chat' ? 'image_url' : api === 'responses' ? 'input_image' : 'image';
  return users.filter((m) => m.role === 'user' && Array.isArray(m.content)).flatMap((m) => (m.content as Json[]).filter((p) => p.type === kind));
}

/** The request as chat-completions messages, for scripts and for tests that read `requests`. */
export function toChatRequest(api: 'responses' | 'messages', body: Json): ChatRequest {
  const messages: ChatRequest['messages'] = [];
  if (api === 'responses') {
    const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input as Json[]);
    for (const raw of input) {
      const item = raw.type === 'item_reference' ? servedItems.get(raw.id)! : raw;
      if (item.type === 'function_call') messages.push({ role: 'assistant', tool_calls: [{ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } }] });
      else if (item.type === 'function_call_output') messages.push({ role: 'tool', tool_call_id: item.call_id, content: textOf(item.output) });
      else messages.push({ role: item.role === 'developer' ? 'system' : item.role, content: textOf(item.content) });
    }
    const tools = (body.tools ?? []).map((t: Json) => ({ type: 'function', function: { name: t.name, parameters: t.parameters } }));
    return { model: body.model, messages, stream: body.stream === true, tools };
  }
  if (body.system) messages.push({ role: 'system', content: textOf(body.system) });
  for (const m of body.messages as Json[]) {
    const blocks: Json[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    const text = blocks
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join('');
    const uses = blocks.filter((b) => b.type === 'tool_use');
    for (const r of blocks.filter((b) => b.type === 'tool_result')) messages.push({ role: 'tool', tool_call_id: r.tool_use_id, content: textOf(r.content) });
    if (uses.length)
      messages.push({ role: 'assistant', content: text || undefined, tool_calls: uses.map((u) => ({ id: u.id, type: 'function', function: { name: u.name, arguments: JSON.stringify(u.input) } })) });
    else if (text) messages.push({ role: m.role, content: text });
  }
  const tools = (body.tools ?? []).map((t: Json) => ({ type: 'function', function: { name: t.name, parameters: t.input_schema } }));
  return { model: body.model, messages, stream: body.stream === true, tools };
}

/** The Responses API's answer to one scripted turn: a message item for the text, a function_call item per tool call. */
export function openAiResponses(turn: ScriptedTurn, index: number, modelId: string): ApiReply {
  const id = `resp_${index}_${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const pieces = piecesOf(turn);
  const text = pieces.join('');
  const messageId = `msg_${index}_${Date.now()}`;
  const message = { type: 'message', id: messageId, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
  const calls = (turn.toolCalls ?? []).map((c, i) => ({
    type: 'function_call',
    id: `fc_${index}_${i}_${Date.now()}`,
    call_id: `call_${index}_${i}`,
    name: c.name,
    arguments: JSON.stringify(c.args),
    status: 'completed',
  }));
  const output = [...(pieces.length ? [message] : []), ...calls];
  for (const item of output) servedItems.set(item.id, item);
  const usage = turn.omitUsage
    ? null
    : {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: pieces.length + calls.length,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 10 + pieces.length + calls.length,
      };
  const response = { id, object: 'response', created_at: created, status: 'completed', model: modelId, output, usage, incomplete_details: null, error: null };
  const events: ApiReply['events'] = [{ event: 'response.created', data: { type: 'response.created', response: { ...response, status: 'in_progress', output: [], usage: null } } }];
  let outputIndex = 0;
  if (pieces.length) {
    events.push({ event: 'response.output_item.added', data: { type: 'response.output_item.added', output_index: outputIndex, item: { ...message, status: 'in_progress', content: [] } } });
    for (const piece of pieces) {
      events.push({ event: 'response.output_text.delta', data: { type: 'response.output_text.delta', item_id: messageId, output_index: outputIndex, content_index: 0, delta: piece }, piece: true });
    }
    events.push({ event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index: outputIndex, item: message } });
    outputIndex++;
  }
  for (const call of calls) {
    events.push({ event: 'response.output_item.added', data: { type: 'response.output_item.added', output_index: outputIndex, item: { ...call, arguments: '', status: 'in_progress' } } });
    events.push({ event: 'response.function_call_arguments.delta', data: { type: 'response.function_call_arguments.delta', item_id: call.id, output_index: outputIndex, delta: call.arguments } });
    events.push({ event: 'response.function_call_arguments.done', data: { type: 'response.function_call_arguments.done', item_id: call.id, output_index: outputIndex, arguments: call.arguments } });
    events.push({ event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index: outputIndex, item: call } });
    outputIndex++;
  }
  events.push({ event: 'response.completed', data: { type: 'response.completed', response } });
  return { whole: response, events };
}

/** Anthropic's answer to one scripted turn: a text block, then a tool_use block per tool call. */
export function anthropicMessages(turn: ScriptedTurn, index: number, modelId: string): ApiReply {
  const id = `msg_${index}_${Date.now()}`;
  const pieces = piecesOf(turn);
  const uses = (turn.toolCalls ?? []).map((c, i) => ({ type: 'tool_use', id: `toolu_${index}_${i}`, name: c.name, input: c.args }));
  const content = [...(pieces.length ? [{ type: 'text', text: pieces.join('') }] : []), ...uses];
  const stopReason = uses.length ? 'tool_use' : 'end_turn';
  // Anthropic always reports usage; "omitted" here is the zero a proxy in front of it may leave.
  const usage = turn.omitUsage ? { input_tokens: 0, output_tokens: 0 } : { input_tokens: 10, output_tokens: pieces.length + uses.length };
  const whole = { id, type: 'message', role: 'assistant', model: modelId, content, stop_reason: stopReason, stop_sequence: null, usage };
  const events: ApiReply['events'] = [
    { event: 'message_start', data: { type: 'message_start', message: { ...whole, content: [], stop_reason: null, usage: { input_tokens: usage.input_tokens, output_tokens: 0 } } } },
  ];
  let block = 0;
  if (pieces.length) {
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index: block, content_block: { type: 'text', text: '' } } });
    for (const piece of pieces) events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index: block, delta: { type: 'text_delta', text: piece } }, piece: true });
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index: block } });
    block++;
  }
  for (const use of uses) {
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index: block, content_block: { ...use, input: {} } } });
    events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index: block, delta: { type: 'input_json_delta', partial_json: JSON.stringify(use.input) } } });
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index: block } });
    block++;
  }
  events.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } } });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return { whole, events };
}
