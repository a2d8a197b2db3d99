import type { Collection, Db } from 'mongodb';
import type { ThreadDoc } from '../../src/assistant/threads';
import { testConfig } from '../support/config';
import { deleteTestIndexes, ingestMiniDocs, sameStack } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { sseChunks, v2Body } from '../support/http';
import { poll } from '../support/poll';
import { startScriptedModel, type ScriptedModel, modelSettings } from '../support/scripted-model';

// An answer's stream does not wait for the database to store its turn once that takes long (1,000 answers ending
// together queue their writes for tens of seconds on FerretDB), and what a reader does next on the thread in this
// process (a follow-up) still finds the turn. The real database stores every turn; only the moment the
// threads' updates reach it is held back here, to stand for a write queue that is slow.

const config = testConfig();
const domain = 'docs.turn-writes.test';
const answer = 'Publish with npm publish [1].';
let gw: RunningGateway;
let model: ScriptedModel;
let key: { id: string; key: string };
let threads: Collection<ThreadDoc>;
/** While set, every update of the threads collection waits for it before it reaches the database. */
let held: Promise<void> | undefined;

/** Makes the gateway's updates of `threads` wait while `held` is set; everything else goes straight through. */
function holdThreadUpdates(db: Db): void {
  const collection = db.collection.bind(db);
  db.collection = ((name: string, options?: object) => {
    const c = collection(name, options);
    if (name !== 'threads') return c;
    return new Proxy(c, {
      get(target, prop) {
        if (prop === 'updateOne') {
          return async (...args: Parameters<typeof target.updateOne>) => {
            await held;
            return target.updateOne(...args);
          };
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }) as Db['collection'];
}

/** Holds the threads' updates until the returned function is called. */
function hold(): () => void {
  let release!: () => void;
  held = new Promise((r) => (release = r));
  return () => {
    held = undefined;
    release();
  };
}

/** Fails with `what` if `p` has not settled within `ms` (the stall this file is about would otherwise hang the test). */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what)), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

beforeAll(async () => {
  await ingestMiniDocs(config, domain);
  model = await startScriptedModel(() => ({ text: ['Publish ', 'with npm publish ', '[1].'] }));
  gw = await startGateway(sameStack(config, { ...modelSettings(model), DOCENT_RELEVANCE_FLOOR: '0' }));
  // Read and written by the test on the real collection; the gateway's own updates go through the hold.
  threads = gw.deps.mongo.db.collection<ThreadDoc>('threads');
  holdThreadUpdates(gw.deps.mongo.db);
  key = await gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', domain });
});
afterAll(async () => {
  held = undefined;
  await gw?.stop();
  await model?.close();
  await deleteTestIndexes(config);
});

const post = (body: object) =>
  fetch(`${gw.url}/discovery/v2/assistant/${domain}/message`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

it('ends the stream while its turn is still being stored; a follow-up on the thread waits for that turn and answers with it', async () => {
  const release = hold();
  try {
    const first = await post(v2Body('How do I publish a package?'));
    const threadId = first.headers.get('x-thread-id')!;
    const chunks = sseChunks(await within(first.text(), 20_000, 'the stream did not end while its turn was being stored'));
    expect(chunks.at(-2)).toEqual({ type: 'finish', threadId, messageMetadata: { threadId } });
    expect((await threads.findOne({ _id: threadId }))?.turns).toEqual([]);

    // The follow-up takes its stream slot, then waits for the first turn's write before it reads the thread.
    const asked = model.requests.length;
    const followUp = post(v2Body('And how do I unpublish it?', { threadId }));
    await poll(
      'the follow-up holding its stream slot',
      () => gw.deps.streams.openStreams(key.id),
      (n) => n === 1,
      10_000,
    );
    release();
    const second = await followUp;
    expect(second.headers.get('x-thread-id')).toBe(threadId);
    await second.text();
    // The model saw the first question and its answer as the thread's history.
    const sent = JSON.stringify(model.requests.slice(asked).at(-1)?.messages);
    expect(sent).toContain('How do I publish a package?');
    expect(sent).toContain(answer);
    await gw.deps.assistant.turnWrites.drain();
    expect((await threads.findOne({ _id: threadId }))?.turns.map((t) => t.userMessage)).toEqual(['How do I publish a package?', 'And how do I unpublish it?']);
  } finally {
    release();
  }
});

it('stores a turn still queued when the gateway stops, before its database client closes', async () => {
  const stopping = await startGateway(sameStack(config, { ...modelSettings(model), DOCENT_RELEVANCE_FLOOR: '0' }));
  holdThreadUpdates(stopping.deps.mongo.db);
  const release = hold();
  try {
    const r = await fetch(`${stopping.url}/discovery/v2/assistant/${domain}/message`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(v2Body('How do I publish a package?')),
    });
    const threadId = r.headers.get('x-thread-id')!;
    await within(r.text(), 20_000, 'the stream did not end while its turn was being stored');
    const stopped = stopping.stop({ keepDatabase: true });
    // A stop that did not wait for the write has closed its database client by now; one that waits is still waiting.
    await Promise.race([stopped, new Promise((r) => setTimeout(r, 2_000))]);
    release();
    await stopped;
    expect((await threads.findOne({ _id: threadId }))?.turns.map((t) => t.answer)).toEqual([answer]);
  } finally {
    release();
  }
});
