import path from 'node:path';
import { callChatApi, type Message as V4Message } from '@ai-sdk/ui-utils';
import { createClient, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import type { SearchDoc } from '../../src/assistant/search-log';
import type { ThreadDoc } from '../../src/assistant/threads';
import { runDocsIngest } from '../../src/cli/docs-ingest';
import { AssistantService as AssistantV1 } from '../../src/gen/discovery/v1/assistant_pb';
import { SearchService } from '../../src/gen/discovery/v1/search_pb';
import { AssistantService as AssistantV2 } from '../../src/gen/discovery/v2/assistant_pb';
import { Code, ConnectError } from '@connectrpc/connect';
import { testConfig } from '../support/config';
import { deleteTestIndexes, npmDocsFolder, sameStack, startWorker } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { sseChunks, v2Body } from '../support/http';
import { offTopicQuestions, onTopicQuestions } from '../support/relevance-questions';
import { startScriptedModel, type ScriptedModel, modelSettings } from '../support/scripted-model';

const config = testConfig();
const domain = 'docs.npm.test';
let offline: RunningGateway; // no model: extractive answers
let online: RunningGateway; // the scripted OpenAI-compatible model
let model: ScriptedModel;
let key: string;
let otherKey: string;

// Each AI SDK major's own client code: @ai-sdk/react 2.x/3.x/4.x are the useChat packages of AI SDK 5/6/7.
type Loose = any;
const majors = ['ai-react-5', 'ai-react-6', 'ai-react-7'].map((pkg) => {
  const react: Loose = require(pkg);
  const ai: Loose = require(require.resolve('ai', { paths: [path.dirname(require.resolve(pkg))] }));
  return {
    pkg,
    aiVersion: require(require.resolve('ai/package.json', { paths: [path.dirname(require.resolve(pkg))] })).version as string,
    Chat: react.Chat,
    DefaultChatTransport: ai.DefaultChatTransport,
  };
});

beforeAll(async () => {
  const worker = await startWorker(config);
  try {
    await runDocsIngest(config, { domain, source: npmDocsFolder, baseUrl: 'https://docs.npmjs.com' }, () => undefined);
  } finally {
    await worker.stop();
  }
  model = await startScriptedModel((req) => {
    const last = JSON.stringify(req.messages.at(-1)?.content ?? '');
    if (last.includes('FAIL')) return undefined as never; // the double answers 500: a provider failure mid-stream
    // A provider that goes silent: after the first piece of its answer, or before any.
    if (last.includes('STALL')) return { text: ['Run ', '`npm ci` ', 'for a clean install [1].'], stall: true };
    if (last.includes('SILENT')) return { text: 'never sent', firstChunkDelayMs: 2 ** 31 - 1 };
    return { text: ['Run ', '`npm ci` ', 'for a clean install [1].'], chunkDelayMs: 2 };
  });
  // The FAIL questions get the double's 500 on purpose.
  model.expectRefusals(/^script has no turn/);
  offline = await startGateway(sameStack(config, { DOCENT_MODEL_PROVIDER: '' }));
  online = await startGateway(sameStack(config, { ...modelSettings(model) }));
  key = (await offline.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  otherKey = (await offline.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain: 'docs.other.test' })).key;
});
afterAll(async () => {
  await deleteTestIndexes(config);
  await online?.stop();
  await offline?.stop();
  await model?.close();
});

const threads = () => offline.deps.mongo.db.collection<ThreadDoc>('threads');
const searches = () => offline.deps.mongo.db.collection<SearchDoc>('searches');
const post = (gw: RunningGateway, version: 'v1' | 'v2', body: object, k = key, d = domain) =>
  fetch(`${gw.url}/discovery/${version}/assistant/${d}/message`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
const v1Body = (text: string, extra: object = {}) => ({ fp: 'anonymous', messages: [{ id: 'm1', role: 'user', content: text, parts: [{ type: 'text', text }] }], ...extra });

describe('v2 UI message stream over the wire', () => {
  it.each([
    ['extractive', () => offline],
    ['model', () => online],
  ])('%s: frames, headers and a last finish event with the thread id', async (_, gw) => {
    const r = await post(gw(), 'v2', v2Body('How do I do a clean install in CI?', { id: 'chat-1', trigger: 'submit-message', messageId: undefined }));
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/event-stream');
    expect(r.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    const threadId = r.headers.get('x-thread-id')!;
    expect(threadId).toMatch(/^thr_[A-Za-z0-9_-]{24}$/);
    const chunks = sseChunks(await r.text());
    expect(chunks.at(-1)).toBe('[DONE]');
    expect(chunks.at(-2)).toEqual({ type: 'finish', threadId, messageMetadata: { threadId } });
    const types = new Set(chunks.slice(0, -1).map((c: Loose) => c.type));
    for (const t of types) expect(['start', 'start-step', 'text-start', 'text-delta', 'text-end', 'source-url', 'finish-step', 'finish']).toContain(t);
    expect(chunks.filter((c: Loose) => c.type === 'source-url')).toHaveLength(5);
    expect(chunks.some((c: Loose) => c.type === 'source-url' && c.url.startsWith('https://docs.npmjs.com/commands/npm-ci'))).toBe(true);
    // The question's retrieval is in the search log, its searchId in the start event, each source's page path beside it.
    expect(chunks[0]).toEqual({ type: 'start', messageId: expect.stringMatching(/^msg_/), messageMetadata: { searchId: expect.stringMatching(/^srch_/) } });
    const search = await searches().findOne({ _id: (chunks[0] as Loose).messageMetadata.searchId });
    expect(search).toMatchObject({ domain, query: 'How do I do a clean install in CI?', results: 5, via: 'assistant', clicks: [] });
    expect(chunks.filter((c: Loose) => c.type === 'source-url').map((c: Loose) => c.providerMetadata?.docent?.path)).toContain('commands/npm-ci');
  });

  it('puts a model failure after the first byte in the stream as an error chunk', async () => {
    const r = await post(online, 'v2', v2Body('How do I do a clean install in CI? FAIL'));
    expect(r.status).toBe(200);
    const chunks = sseChunks(await r.text());
    expect(chunks.at(-1)).toBe('[DONE]');
    expect(chunks.at(-2)).toMatchObject({ type: 'error' });
    expect(JSON.stringify(chunks)).not.toContain(model.baseUrl);
  });
});

describe('honest answers: below the relevance floor the docs do not cover the question', () => {
  const sourcesAndText = async (gw: RunningGateway, question: string) => {
    const chunks = sseChunks(await (await post(gw, 'v2', v2Body(question))).text());
    return {
      sources: chunks.filter((c: Loose) => c.type === 'source-url').length,
      text: chunks
        .filter((c: Loose) => c.type === 'text-delta')
        .map((c: Loose) => c.delta)
        .join(''),
    };
  };

  // The bars are the rates measured when the floor was chosen (bench/relevance-floor.ts): 2 of 30 off-topic questions
  // still get citations, no on-topic question is refused. Raise them, never lower.
  it('cites nothing for off-topic questions and says the docs do not cover them (extractive)', async () => {
    let cited = 0;
    for (const q of offTopicQuestions) {
      const { sources, text } = await sourcesAndText(offline, q);
      if (sources > 0) cited++;
      else expect(text).toMatch(/^The documentation does not cover this question/);
    }
    expect(cited).toBeLessThanOrEqual(2);
  });

  it('still answers every on-topic question with citations', async () => {
    const refused: string[] = [];
    for (const q of onTopicQuestions) if ((await sourcesAndText(offline, q)).sources === 0) refused.push(q);
    expect(refused).toEqual([]);
  });

  it('does the same with a model, which is not asked at all below the floor', async () => {
    const before = model.requests.length;
    const off = await sourcesAndText(online, 'what is the capital of Australia?');
    expect(off.sources).toBe(0);
    expect(off.text).toMatch(/^The documentation does not cover this question/);
    expect(model.requests.length).toBe(before);
    const on = await sourcesAndText(online, 'how do I install a package only for development?');
    expect(on.sources).toBe(5);
    expect(model.requests.length).toBe(before + 1);
  });

  it('records on the thread whether the question was answered, and how relevant the nearest passage was', async () => {
    const r = await post(offline, 'v2', v2Body('how do I bake sourdough bread?'));
    await r.text();
    const thread = await threads().findOne({ _id: r.headers.get('x-thread-id')! });
    expect(thread!.turns[0]).toMatchObject({ answered: false, model: 'not-covered', sources: [] });
    expect(thread!.turns[0]!.relevance).toBeLessThan(offline.deps.config.assistant.relevanceFloor);
  });
});

describe('v1 data stream over the wire', () => {
  it('writes f, h, 0, 8, e, d lines with the thread id and the searchId', async () => {
    const r = await post(online, 'v1', v1Body('How do I do a clean install in CI?'));
    expect(r.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(r.headers.get('x-vercel-ai-data-stream')).toBe('v1');
    const threadId = r.headers.get('x-thread-id')!;
    const lines = (await r.text()).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^f:\{"messageId":"msg_/);
    expect(lines.filter((l) => l.startsWith('h:'))).toHaveLength(5);
    expect(
      lines
        .filter((l) => l.startsWith('0:'))
        .map((l) => JSON.parse(l.slice(2)))
        .join(''),
    ).toBe('Run `npm ci` for a clean install [1].');
    // The annotation carries the searchId of the question's retrieval, for clicks on the sources (their paths are in h:).
    const annotation = lines.find((l) => l.startsWith('8:'))!;
    expect(JSON.parse(annotation.slice(2))).toEqual([{ threadId, searchId: expect.stringMatching(/^srch_/) }]);
    expect(JSON.parse(lines.find((l) => l.startsWith('h:'))!.slice(2))).toMatchObject({ providerMetadata: { docent: { path: 'commands/npm-ci' } } });
    expect(JSON.parse(lines.at(-1)!.slice(2))).toEqual({ finishReason: 'stop', usage: { promptTokens: 10, completionTokens: 3 }, threadId });
  });

  it('ends with a 3: line when the model fails after streaming began', async () => {
    const lines = (await (await post(online, 'v1', v1Body('How do I do a clean install in CI? FAIL'))).text()).trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^3:"/);
  });
});

describe('request validation and access', () => {
  it.each([
    ['no fp', { messages: v2Body('x').messages }, 'fp'],
    ['empty messages', { fp: 'anonymous', messages: [] }, 'messages'],
    ['currentPath of 201 characters', v2Body('x', { currentPath: 'a'.repeat(201) }), 'currentPath'],
    ['a last message from the assistant', { fp: 'anonymous', messages: [{ role: 'assistant', parts: [{ type: 'text', text: 'hi' }] }] }, 'messages'],
    ['v1 messages without parts or content', { fp: 'anonymous', messages: [{ role: 'user' }] }, 'messages'],
  ])('v2/v1 refuse %s with 400 and the error shape', async (_, body, field) => {
    const version = _.startsWith('v1') ? 'v1' : 'v2';
    const r = await post(offline, version, body);
    expect(r.status).toBe(400);
    const b: Loose = await r.json();
    expect(b.code).toBe('invalid_argument');
    expect(b.error).toContain(field);
  });

  it('refuses a 60 KB question with 400 invalid_argument (v2 and v1 over REST, v2 over Connect)', async () => {
    const halves = [
      { type: 'text', text: 'q'.repeat(30_000) },
      { type: 'text', text: 'q'.repeat(30_000) },
    ];
    const v2 = await post(offline, 'v2', { fp: 'anonymous', messages: [{ role: 'user', parts: halves }] });
    const v1 = await post(offline, 'v1', { fp: 'anonymous', messages: [{ role: 'user', content: '', parts: halves }] });
    for (const r of [v2, v1]) {
      expect(r.status).toBe(400);
      expect(await r.json()).toEqual({ code: 'invalid_argument', error: expect.stringMatching(/question .* 60001 bytes; at most 8192 bytes \(8 KiB\)/) });
    }
    const client = createClient(AssistantV2, createConnectTransport({ baseUrl: offline.url, httpVersion: '1.1' }));
    const drain = async () => {
      for await (const e of client.sendMessage({ domain, fp: 'anonymous', messages: [{ role: 'user', parts: halves }] }, { headers: { authorization: `Bearer ${key}` } })) void e;
    };
    await expect(drain()).rejects.toMatchObject({ code: 3 });
  });

  it('answers 401 without a key and 404 for a key of another domain', async () => {
    expect((await post(offline, 'v2', v2Body('x'), 'docent_asst_nope')).status).toBe(401);
    const r = await post(offline, 'v2', v2Body('x'), otherKey);
    expect(r.status).toBe(404);
    expect(((await r.json()) as Loose).code).toBe('not_found');
  });

  it('starts a new thread for a thread id the domain does not know', async () => {
    const r = await post(offline, 'v2', v2Body('npm ci', { threadId: 'thr_doesnotexist' }));
    await r.text();
    expect(r.headers.get('x-thread-id')).not.toBe('thr_doesnotexist');
  });

  it('uses filters, currentPath and context in retrieval', async () => {
    const r = await fetch(`${offline.url}/discovery/v2/assistant/${domain}/message`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(
        v2Body('what does this flag do?', { filter: { pathPrefix: 'commands/' }, currentPath: '/commands/npm-ci', context: [{ type: 'code', value: 'npm ci --omit=dev' }], retrievalPageSize: 3 }),
      ),
    });
    const sources = sseChunks(await r.text()).filter((c: Loose) => c.type === 'source-url');
    expect(sources).toHaveLength(3);
    expect(sources[0].url).toMatch(/^https:\/\/docs\.npmjs\.com\/commands\/npm-ci/);
    for (const s of sources) expect(s.url).toMatch(/^https:\/\/docs\.npmjs\.com\/commands\//);
  });
});

describe('history the model sees', () => {
  // Each earlier message is 4,000 bytes, about 1,338 estimated tokens: two fit the default 4,000-token budget.
  const marked = (i: number) => `MARK${i}:` + 'x'.repeat(3_994);
  const sentMessages = (from: number) => JSON.stringify(model.requests.slice(from).at(-1)?.messages);

  it('keeps only the most recent client messages of a new thread that fit the token budget', async () => {
    const earlier = Array.from({ length: 10 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', parts: [{ type: 'text', text: marked(i) }] }));
    const before = model.requests.length;
    const r = await post(online, 'v2', { fp: 'anonymous', messages: [...earlier, { role: 'user', parts: [{ type: 'text', text: 'and in CI?' }] }] });
    expect(r.status).toBe(200);
    await r.text();
    const sent = sentMessages(before);
    expect(sent).toContain('MARK8:');
    expect(sent).toContain('MARK9:');
    for (let i = 0; i < 8; i++) expect(sent).not.toContain(`MARK${i}:`);
    expect(sent).toContain('and in CI?');
  });

  it('trims a stored thread the same way, newest turns first', async () => {
    const first = await post(online, 'v2', v2Body('clean install in CI'));
    const threadId = first.headers.get('x-thread-id')!;
    await first.text();
    const turn = (i: number) => ({
      userMessage: marked(2 * i),
      answer: marked(2 * i + 1),
      status: 'completed' as const,
      sources: [],
      model: 'test',
      timings: { retrievalMs: 0, totalMs: 0 },
      createdAt: new Date(),
    });
    await threads().updateOne({ _id: threadId }, { $set: { turns: Array.from({ length: 5 }, (_, i) => turn(i)) } });
    const before = model.requests.length;
    const r = await post(online, 'v2', v2Body('and with workspaces?', { threadId }));
    expect(r.headers.get('x-thread-id')).toBe(threadId);
    await r.text();
    const sent = sentMessages(before);
    expect(sent).toContain('MARK8:');
    expect(sent).toContain('MARK9:');
    for (let i = 0; i < 8; i++) expect(sent).not.toContain(`MARK${i}:`);
  });
});

describe.each(majors)('AI SDK $aiVersion Chat ($pkg) reading v2', ({ Chat, DefaultChatTransport }) => {
  it.each([
    ['extractive', () => offline],
    ['model', () => online],
  ])('%s: ends with the answer, the sources and the thread id; a follow-up continues the thread', async (kind, gw) => {
    const transport = new DefaultChatTransport({ api: `${gw().url}/discovery/v2/assistant/${domain}/message`, headers: { authorization: `Bearer ${key}` }, body: { fp: 'anonymous' } });
    const chat = new Chat({ transport });
    await chat.sendMessage({ text: 'How do I do a clean install in CI?' });
    expect(chat.error).toBeUndefined();
    expect(chat.status).toBe('ready');
    const answer = chat.messages.at(-1);
    const text = answer.parts
      .filter((p: Loose) => p.type === 'text')
      .map((p: Loose) => p.text)
      .join('');
    if (kind === 'model') expect(text).toBe('Run `npm ci` for a clean install [1].');
    else expect(text).toMatch(/^Here is what the documentation says:[\s\S]*\[1\]/);
    const sources = answer.parts.filter((p: Loose) => p.type === 'source-url');
    expect(sources).toHaveLength(5);
    const threadId = answer.metadata?.threadId;
    expect(threadId).toMatch(/^thr_/);
    // The start event's searchId is kept beside the finish event's thread id; the sources keep their page paths.
    expect(answer.metadata?.searchId).toMatch(/^srch_/);
    expect(sources.map((p: Loose) => p.providerMetadata?.docent?.path)).toContain('commands/npm-ci');
    const click = await fetch(`${gw().url}/discovery/v1/search/${domain}/click`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ searchId: answer.metadata.searchId, path: 'commands/npm-ci' }),
    });
    expect(click.status).toBe(204);
    expect((await searches().findOne({ _id: answer.metadata.searchId }))?.clicks.map((c) => c.path)).toEqual(['commands/npm-ci']);

    const before = model.requests.length;
    await chat.sendMessage({ text: 'And how is it different from npm install?' }, { body: { threadId } });
    expect(chat.error).toBeUndefined();
    expect(chat.messages.at(-1).metadata?.threadId).toBe(threadId);
    const stored = await threads().findOne({ _id: threadId });
    expect(stored?.turns.map((t) => t.userMessage)).toEqual(['How do I do a clean install in CI?', 'And how is it different from npm install?']);
    expect(stored?.turns[1]?.sources).toHaveLength(5);
    expect(stored?.turns[0]?.model).toBe(kind === 'model' ? `openai-compatible:${model.modelId}` : 'extractive');
    if (kind === 'model') {
      const sent = JSON.stringify(model.requests.slice(before).at(-1)?.messages);
      expect(sent).toContain('How do I do a clean install in CI?');
      expect(sent).toContain('Run `npm ci` for a clean install [1].');
    }
  });
});

describe('AI SDK 4 (@ai-sdk/ui-utils callChatApi) reading v1', () => {
  const ask = (gw: RunningGateway, text: string, extra: object = {}) =>
    new Promise<{ message: V4Message; finishReason?: string }>((resolve, reject) => {
      const user = { id: 'u1', role: 'user' as const, content: text, parts: [{ type: 'text' as const, text }] };
      callChatApi({
        api: `${gw.url}/discovery/v1/assistant/${domain}/message`,
        body: { id: 'chat-4', messages: [user], fp: 'anonymous', ...extra },
        streamProtocol: 'data',
        credentials: undefined,
        headers: { authorization: `Bearer ${key}` },
        abortController: () => null,
        restoreMessagesOnFailure: () => undefined,
        onResponse: undefined,
        onUpdate: () => undefined,
        onFinish: (message, { finishReason }) => resolve({ message, finishReason }),
        onToolCall: undefined,
        generateId: () => Math.random().toString(36).slice(2),
        fetch: undefined,
        lastMessage: undefined,
      }).catch(reject);
    });

  it.each([
    ['extractive', () => offline],
    ['model', () => online],
  ])('%s: ends with the answer, the sources and the thread id; a follow-up continues the thread', async (kind, gw) => {
    const { message, finishReason } = await ask(gw(), 'How do I do a clean install in CI?');
    expect(finishReason).toBe('stop');
    if (kind === 'model') expect(message.content).toBe('Run `npm ci` for a clean install [1].');
    else expect(message.content).toContain('[1]');
    const sources = (message.parts ?? []).filter((p) => p.type === 'source');
    expect(sources).toHaveLength(5);
    const threadId = (message.annotations?.[0] as { threadId: string } | undefined)?.threadId;
    expect(threadId).toMatch(/^thr_/);
    const searchId = (message.annotations?.[0] as { searchId?: string } | undefined)?.searchId;
    expect(await searches().findOne({ _id: searchId })).toMatchObject({ query: 'How do I do a clean install in CI?', results: 5, via: 'assistant' });
    expect(sources.map((p) => (p.type === 'source' ? p.source.providerMetadata?.docent?.path : undefined))).toContain('commands/npm-ci');
    const second = await ask(gw(), 'and with workspaces?', { threadId });
    expect((second.message.annotations?.[0] as { threadId: string } | undefined)?.threadId).toBe(threadId);
    expect((await threads().findOne({ _id: threadId }))?.turns).toHaveLength(2);
  });
});

describe('Connect, gRPC and gRPC-web', () => {
  const transports: Array<[string, () => Transport]> = [
    ['Connect', () => createConnectTransport({ baseUrl: online.url, httpVersion: '1.1' })],
    ['gRPC', () => createGrpcTransport({ baseUrl: online.h2Url })],
    ['gRPC-web', () => createGrpcWebTransport({ baseUrl: online.url, httpVersion: '1.1' })],
  ];
  const headers = () => ({ authorization: `Bearer ${key}` });

  it.each(transports)('%s: v2 SendMessage streams text, sources and a finish with the thread id', async (_, transport) => {
    const client = createClient(AssistantV2, transport());
    let text = '';
    const sources: string[] = [];
    let threadId = '';
    for await (const ev of client.sendMessage({ domain, fp: 'anonymous', messages: [{ role: 'user', parts: [{ type: 'text', text: 'clean install in CI' }] }] }, { headers: headers() })) {
      if (ev.event.case === 'textDelta') text += ev.event.value;
      else if (ev.event.case === 'source') sources.push(ev.event.value.path);
      else if (ev.event.case === 'finish') threadId = ev.event.value.threadId;
    }
    expect(text).toBe('Run `npm ci` for a clean install [1].');
    expect(sources).toHaveLength(5);
    expect(sources).toContain('commands/npm-ci');
    expect(threadId).toMatch(/^thr_/);
  });

  it('v1 SendMessage (deprecated) and Search answer too; validation has the REST codes', async () => {
    const t = createConnectTransport({ baseUrl: online.url, httpVersion: '1.1' });
    const v1 = createClient(AssistantV1, t);
    let finish = '';
    for await (const ev of v1.sendMessage({ domain, fp: 'u-1', messages: [{ role: 'user', content: 'clean install in CI' }] }, { headers: headers() })) {
      if (ev.event.case === 'finishThreadId') finish = ev.event.value;
    }
    expect(finish).toMatch(/^thr_/);
    const search = createClient(SearchService, t);
    const r = await search.search({ domain, query: 'clean install in CI', pageSize: 3 }, { headers: headers() });
    expect(r.results[0]?.path).toBe('commands/npm-ci');
    await expect(search.search({ domain, query: 'x', pageSize: 99 }, { headers: headers() })).rejects.toMatchObject({ code: 3 });
    await expect(search.search({ domain: 'docs.other.test', query: 'x' }, { headers: headers() })).rejects.toMatchObject({ code: 5 });
  });
});

describe('a model that stalls', () => {
  // Bounds of a second, and one stream slot per key: a stalled answer that kept its slot would refuse the next question.
  let stalling: RunningGateway;
  let oneSlotKey: string;
  beforeAll(async () => {
    stalling = await startGateway(
      sameStack(config, {
        ...modelSettings(model),
        DOCENT_ASSISTANT_MODEL_FIRST_CHUNK_MS: '1000',
        DOCENT_ASSISTANT_MODEL_CHUNK_GAP_MS: '1000',
        DOCENT_STREAMS_PER_ASSISTANT_KEY: '1',
      }),
    );
    oneSlotKey = (await stalling.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  });
  afterAll(() => stalling?.stop());

  /** The model call of the last request the double received was cancelled by docent: no provider connection is left open. */
  async function expectModelCallCancelled(): Promise<void> {
    const last = model.requests.length - 1;
    // The double sees the hang-up when the socket closes, which can be a moment after the client read the error.
    for (let tries = 0; !model.hungUp.includes(last) && tries < 50; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(model.hungUp).toContain(last);
  }

  /** The key's one slot is free again: a question on it is answered to its finish, not refused with 429. */
  async function expectSlotFree(): Promise<void> {
    // The slot is given back when the server closes the response, which can be a moment after the client read its end.
    let r = await post(stalling, 'v2', v2Body('How do I do a clean install in CI?'), oneSlotKey);
    for (let tries = 0; r.status === 429 && tries < 20; tries++) {
      await r.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 100));
      r = await post(stalling, 'v2', v2Body('How do I do a clean install in CI?'), oneSlotKey);
    }
    expect(r.status).toBe(200);
    expect(sseChunks(await r.text()).at(-2)).toMatchObject({ type: 'finish' });
  }

  it('v2: an answer that goes silent mid-answer ends with an unavailable error chunk after the text so far, is stored as failed, cancels the model call, and frees its stream slot', async () => {
    const r = await post(stalling, 'v2', v2Body('How do I do a clean install in CI? STALL'), oneSlotKey);
    expect(r.status).toBe(200);
    const chunks = sseChunks(await r.text());
    expect(chunks.filter((c: Loose) => c.type === 'text-delta').map((c: Loose) => c.delta)).toEqual(['Run ']);
    expect(chunks.at(-2)).toEqual({ type: 'error', errorText: 'the model stopped answering mid-answer (no output for 1 s); ask again' });
    expect(chunks.at(-1)).toBe('[DONE]');
    const thread = await threads().findOne({ _id: r.headers.get('x-thread-id')! });
    expect(thread!.turns.at(-1)).toMatchObject({ status: 'failed', answer: 'Run ' });
    await expectModelCallCancelled();
    await expectSlotFree();
  });

  it('v1: an answer that goes silent mid-answer ends with a 3: line naming the stall, cancels the model call, and frees its stream slot', async () => {
    const r = await post(stalling, 'v1', v1Body('How do I do a clean install in CI? STALL'), oneSlotKey);
    expect(r.status).toBe(200);
    const lines = (await r.text()).trimEnd().split('\n');
    expect(lines.filter((l) => l.startsWith('0:'))).toEqual(['0:"Run "']);
    expect(lines.at(-1)).toBe('3:"the model stopped answering mid-answer (no output for 1 s); ask again"');
    await expectModelCallCancelled();
    await expectSlotFree();
  });

  it('v2 over REST and Connect: a model that never starts its answer ends the stream with unavailable, cancels the model call, and frees the slot', async () => {
    const r = await post(stalling, 'v2', v2Body('How do I do a clean install in CI? SILENT'), oneSlotKey);
    expect(r.status).toBe(200);
    const chunks = sseChunks(await r.text());
    expect(chunks.some((c: Loose) => c.type === 'text-delta')).toBe(false);
    expect(chunks.at(-2)).toEqual({ type: 'error', errorText: 'the model did not start answering within 1 s; ask again' });
    await expectModelCallCancelled();
    await expectSlotFree();

    const client = createClient(AssistantV2, createConnectTransport({ baseUrl: stalling.url, httpVersion: '1.1' }));
    const read = async () => {
      for await (const _ of client.sendMessage(
        { domain, fp: 'anonymous', messages: [{ role: 'user', parts: [{ type: 'text', text: 'clean install in CI SILENT' }] }] },
        { headers: { authorization: `Bearer ${oneSlotKey}` } },
      ));
    };
    const err = await read().then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(err).toBeInstanceOf(ConnectError);
    expect({ code: err!.code, message: err!.rawMessage }).toEqual({ code: Code.Unavailable, message: 'the model did not start answering within 1 s; ask again' });
    await expectModelCallCancelled();
    await expectSlotFree();
  });
});
