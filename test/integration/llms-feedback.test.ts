import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import type { ThreadDoc } from '../../src/assistant/threads';
import { AssistantService } from '../../src/gen/discovery/v2/assistant_pb';
import { testConfig } from '../support/config';
import { deleteTestIndexes, ingestMiniDocs, sameStack } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { sseChunks, v2Body } from '../support/http';

const config = testConfig();
const domain = 'docs.kiln.test';
let gw: RunningGateway;
let key: string;
let otherKey: string;

beforeAll(async () => {
  await ingestMiniDocs(config, domain);
  gw = await startGateway(sameStack(config));
  key = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain })).key;
  otherKey = (await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain: 'docs.other.test' })).key;
});
afterAll(async () => {
  await deleteTestIndexes(config);
  await gw?.stop();
});

/**
 * The llms.txt structure of llmstxt.org: an H1 (required) first, then a blockquote summary, then optional paragraphs,
 * then H2 sections whose content is a Markdown list of `[name](url)` links, each optionally followed by `: notes`.
 * Returns the problems found (none for a valid file) and the links, by section.
 */
function checkLlmsTxt(text: string): { problems: string[]; sections: Map<string, Array<{ title: string; url: string; notes?: string }>> } {
  const problems: string[] = [];
  const sections = new Map<string, Array<{ title: string; url: string; notes?: string }>>();
  const lines = text.split('\n');
  if (!/^# \S/.test(lines[0] ?? '')) problems.push('the first line is not an H1');
  if (lines.filter((l) => /^# /.test(l)).length !== 1) problems.push('there is not exactly one H1');
  const firstContent = lines.slice(1).find((l) => l.trim() !== '');
  if (!firstContent?.startsWith('> ')) problems.push('no blockquote summary after the H1');
  let section: string | undefined;
  for (const line of lines.slice(1)) {
    if (line.startsWith('## ')) {
      section = line.slice(3);
      sections.set(section, []);
    } else if (/^#{1,6} /.test(line)) problems.push(`a heading other than H2 after the H1: ${line}`);
    else if (section && line.trim()) {
      const m = /^- \[([^\]]+)\]\(([^)\s]+)\)(?:: (.+))?$/.exec(line);
      if (!m) problems.push(`not a link list item in section ${section}: ${line}`);
      else sections.get(section)!.push({ title: m[1]!, url: m[2]!, ...(m[3] ? { notes: m[3] } : {}) });
    }
  }
  if (sections.size === 0) problems.push('no H2 section');
  return { problems, sections };
}

describe('llms.txt and llms-full.txt', () => {
  it('serves llms.txt without a key, valid by llmstxt.org, listing each public page under its section', async () => {
    const r = await fetch(`${gw.url}/discovery/v1/llms/${domain}/llms.txt`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const text = await r.text();
    const { problems, sections } = checkLlmsTxt(text);
    expect(problems).toEqual([]);
    expect(text.split('\n')[0]).toBe('# Kiln');
    expect([...sections.keys()]).toEqual(['Docs', 'Guides']);
    expect(sections.get('Guides')).toContainEqual({ title: 'Quickstart', url: 'https://kiln.example/guides/quickstart' });
    expect(sections.get('Docs')).toEqual([{ title: 'Kiln', url: 'https://kiln.example/' }]);
  });

  it('never lists a restricted page, in either file', async () => {
    const [short, full] = await Promise.all(['llms.txt', 'llms-full.txt'].map((f) => fetch(`${gw.url}/discovery/v1/llms/${domain}/${f}`).then((r) => r.text())));
    expect(short).not.toContain('release-process');
    expect(full).not.toContain('signing key');
    expect(full).not.toContain('vault');
  });

  it('serves llms-full.txt with every public page as Markdown', async () => {
    const text = await (await fetch(`${gw.url}/discovery/v1/llms/${domain}/llms-full.txt`)).text();
    expect(text).toMatch(/^# Kiln\n\n> /);
    expect(text).toContain('# Quickstart\nSource: https://kiln.example/guides/quickstart\n');
    expect(text).toContain('## Install the kiln binary');
    expect(text).toContain('Then run kiln bake in your site folder.');
  });

  it('is built once per served version: the ETag names it and a revalidation gets 304', async () => {
    const first = await fetch(`${gw.url}/discovery/v1/llms/${domain}/llms.txt`);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
    const again = await fetch(`${gw.url}/discovery/v1/llms/${domain}/llms.txt`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });

  it('answers 404 in the error shape for a domain without docs', async () => {
    const r = await fetch(`${gw.url}/discovery/v1/llms/docs.nothing.test/llms.txt`);
    expect(r.status).toBe(404);
    expect(await r.json()).toMatchObject({ code: 'not_found' });
  });
});

describe('answer feedback', () => {
  const feedback = (body: object, k = key, d = domain) =>
    fetch(`${gw.url}/discovery/v1/assistant/${d}/feedback`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const ask = async (text: string, threadId?: string) => {
    const r = await fetch(`${gw.url}/discovery/v2/assistant/${domain}/message`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(v2Body(text, threadId ? { threadId } : {})),
    });
    const chunks = sseChunks(await r.text());
    return { threadId: r.headers.get('x-thread-id')!, messageId: chunks[0].messageId as string };
  };
  const turnsOf = async (threadId: string) => (await gw.deps.mongo.db.collection<ThreadDoc>('threads').findOne({ _id: threadId }))!.turns;

  it('stores a rating and comment on the turn the message id names, and on the latest turn without one', async () => {
    const first = await ask('How do I install kiln?');
    const second = await ask('And how do I bake my site?', first.threadId);
    expect(second.threadId).toBe(first.threadId);

    const down = await feedback({ threadId: first.threadId, messageId: first.messageId, rating: 'down', comment: 'it did not say where to download it' });
    expect(down.status).toBe(204);
    expect(await down.text()).toBe('');
    const up = await feedback({ threadId: first.threadId, rating: 'up' });
    expect(up.status).toBe(204);

    const turns = await turnsOf(first.threadId);
    expect(turns[0]!.feedback).toMatchObject({ rating: 'down', comment: 'it did not say where to download it' });
    expect(turns[1]!.feedback).toMatchObject({ rating: 'up' });
    expect(turns[1]!.feedback!.comment).toBeUndefined();
  });

  it('answers 404 for a thread unknown to the domain, or a message not in the thread', async () => {
    const { threadId } = await ask('How do I install kiln?');
    const unknown = await feedback({ threadId: 'thr_unknown', rating: 'up' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'not_found' });
    // The thread exists, but in another domain: the other domain's key cannot rate it.
    const elsewhere = await feedback({ threadId, rating: 'down' }, otherKey, 'docs.other.test');
    expect(elsewhere.status).toBe(404);
    const noMessage = await feedback({ threadId, messageId: 'msg_nope', rating: 'up' });
    expect(noMessage.status).toBe(404);
    expect((await turnsOf(threadId))[0]!.feedback).toBeUndefined();
  });

  it('refuses a bad rating or a missing key with 400 and 401', async () => {
    const bad = await feedback({ threadId: 'thr_x', rating: 'meh' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'invalid_argument', error: expect.stringContaining('rating') });
    const anonymous = await fetch(`${gw.url}/discovery/v1/assistant/${domain}/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ threadId: 'thr_x', rating: 'up' }),
    });
    expect(anonymous.status).toBe(401);
  });

  it('is the same over Connect: SendFeedback stores the rating, and an unknown thread is NOT_FOUND', async () => {
    const { threadId, messageId } = await ask('How do I install kiln?');
    const client = createClient(AssistantService, createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' }));
    const headers = { authorization: `Bearer ${key}` };
    await client.sendFeedback({ domain, threadId, messageId, rating: 'down', comment: 'too short' }, { headers });
    expect((await turnsOf(threadId))[0]!.feedback).toMatchObject({ rating: 'down', comment: 'too short' });
    const missing = await client.sendFeedback({ domain, threadId: 'thr_unknown', rating: 'up' }, { headers }).catch((err: unknown) => ConnectError.from(err));
    expect(missing).toBeInstanceOf(ConnectError);
    expect((missing as ConnectError).code).toBe(Code.NotFound);
    const bad = await client.sendFeedback({ domain, threadId, rating: 'sideways' }, { headers }).catch((err: unknown) => ConnectError.from(err));
    expect((bad as ConnectError).code).toBe(Code.InvalidArgument);
  });
});
