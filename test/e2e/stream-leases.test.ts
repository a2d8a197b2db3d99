import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import type { JobDoc } from '../../src/jobs/job';
import { AgentJobStatus, AgentService } from '../../src/gen/agent/v2/agent_pb';
import { testConfig } from '../support/config';
import { deleteTestIndexes, ingestMiniDocs, sameStack } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { callApi, sseChunks, v2Body } from '../support/http';
import { startScriptedModel, type ScriptedModel, modelSettings } from '../support/scripted-model';

// Long streams at the edge: a revoked key ends its running streams within the re-check bound, and one key holds at
// most its cap of streams at once. Real gateway, real gRPC and HTTP clients, the real database and index.

const recheckMs = 200;
// What tells "ended by the re-check" from the alternatives: a watch of an unchanging job never ends by itself, an
// answer takes 20 s (below), and without re-checks a revoked key would stream on to the end. A bound far above one
// re-check period, the lookup and delivery keeps a loaded machine from failing it; the error itself names the cause.
const revocationBoundMs = recheckMs + 5_000;
const config = testConfig();
const domain = 'docs.streams.test';
let gw: RunningGateway;
let model: ScriptedModel;

const activeJob: JobDoc = {
  _id: 'job_watched',
  projectId: 'proj-s',
  status: 'active',
  source: { repository: 'acme/s', ref: 'main' },
  model: 'm',
  branch: 'docent/job_watched',
  prLink: null,
  createdAt: new Date(),
  updatedAt: new Date(),
  archivedAt: null,
  turn: 1,
  prompts: [],
  asDraft: false,
};

beforeAll(async () => {
  await ingestMiniDocs(config, domain);
  // A slow answer: 200 pieces, 100 ms apart, so a stream is still running long after its key is revoked.
  model = await startScriptedModel(() => ({ text: Array.from({ length: 200 }, (_, i) => `piece${i} `), chunkDelayMs: 100 }));
  gw = await startGateway(
    sameStack(config, {
      ...modelSettings(model),
      DOCENT_STREAM_KEY_RECHECK_MS: String(recheckMs),
      DOCENT_STREAMS_PER_ADMIN_KEY: '2',
      DOCENT_STREAMS_PER_ASSISTANT_KEY: '2',
      DOCENT_SHUTDOWN_GRACE_MS: '1000',
    }),
  );
  await gw.deps.tenancy.createOrg('acme');
  await gw.deps.tenancy.createProject({ _id: 'proj-s', orgId: 'acme', repository: 'acme/s', ref: 'main', domain });
  await gw.deps.mongo.db.collection<JobDoc>('jobs').insertOne(activeJob);
});
afterAll(async () => {
  await gw?.stop();
  await model?.close();
  await deleteTestIndexes(config);
});

const adminKey = () => gw.deps.keys.create({ kind: 'admin', orgId: 'acme', projectId: 'proj-s' });
const assistantKey = () => gw.deps.keys.create({ kind: 'assistant', orgId: 'acme', projectId: 'proj-s', domain });
const watchClient = () => createClient(AgentService, createGrpcTransport({ baseUrl: gw.h2Url }));

/** Starts a watch and waits for its first message (the job as it is). */
async function startWatch(key: string, signal?: AbortSignal) {
  const messages = watchClient()
    .watchAgentJob({ projectId: 'proj-s', jobId: 'job_watched' }, { headers: { authorization: `Bearer ${key}` }, signal })
    [Symbol.asyncIterator]();
  const first = await messages.next();
  expect(first.value?.job?.status).toBe(AgentJobStatus.ACTIVE);
  return messages;
}

/** Polls until `check` holds, or fails after `ms`. */
async function eventually(check: () => boolean, ms = 5_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('WatchAgentJob', () => {
  it('ends with unauthenticated within the re-check bound once its key is revoked', async () => {
    const { id, key } = await adminKey();
    const messages = await startWatch(key);
    const next = messages.next().then(
      () => null,
      (e: unknown) => ConnectError.from(e),
    );
    // While the key works, the watch of an unchanging job stays open across several re-checks.
    expect(await Promise.race([next, new Promise((r) => setTimeout(() => r('still open'), recheckMs * 3))])).toBe('still open');
    const revokedAt = performance.now();
    await gw.deps.keys.revoke(id);
    const err = await next;
    expect(err?.code).toBe(Code.Unauthenticated);
    expect(performance.now() - revokedAt).toBeLessThan(revocationBoundMs);
    await eventually(() => gw.deps.streams.openStreams(id) === 0);
  });

  it('holds a key to its cap of concurrent watches, and frees the slot when a watch ends', async () => {
    const { id, key } = await adminKey();
    const stops = [new AbortController(), new AbortController()];
    await Promise.all(stops.map((s) => startWatch(key, s.signal)));
    const refused = await startWatch(key).then(
      () => null,
      (e: unknown) => ConnectError.from(e),
    );
    expect(refused?.code).toBe(Code.ResourceExhausted);
    expect(Number(refused?.metadata.get('retry-after'))).toBeGreaterThan(0);

    stops[0]!.abort();
    await eventually(() => gw.deps.streams.openStreams(id) === 1);
    const again = new AbortController();
    await startWatch(key, again.signal);
    for (const s of [stops[1]!, again]) s.abort();
    await eventually(() => gw.deps.streams.openStreams(id) === 0);
  });
});

describe('SSE answers', () => {
  /** Starts a v2 answer and reads it frame by frame. */
  async function startAnswer(key: string, signal?: AbortSignal) {
    const res = await callApi(gw.url, key, 'POST', `/discovery/v2/assistant/${domain}/message`, v2Body('how do I start?'), {});
    expect(res.status).toBe(200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    signal?.addEventListener('abort', () => void reader.cancel());
    let text = '';
    const readUntil = async (done: (soFar: string) => boolean) => {
      while (!done(text)) {
        const r = await reader.read();
        if (r.done) break;
        text += r.value;
      }
      return text;
    };
    await readUntil((t) => t.includes('"text-delta"'));
    return { readUntil, reader };
  }

  it('ends with an error chunk within the re-check bound once its key is revoked', async () => {
    const { id, key } = await assistantKey();
    const answer = await startAnswer(key);
    const revokedAt = performance.now();
    await gw.deps.keys.revoke(id);
    const raw = await answer.readUntil(() => false);
    expect(performance.now() - revokedAt).toBeLessThan(revocationBoundMs);
    const chunks = sseChunks(raw);
    expect(chunks.at(-1)).toBe('[DONE]');
    expect(chunks.at(-2)).toEqual({ type: 'error', errorText: 'the API key was revoked or has expired' });
    expect(chunks.some((c) => c.type === 'finish')).toBe(false);
    await eventually(() => gw.deps.streams.openStreams(id) === 0);
  });

  it('answers 429 resource_exhausted beyond the key’s cap of concurrent answers', async () => {
    const { id, key } = await assistantKey();
    const stop = new AbortController();
    await Promise.all([startAnswer(key, stop.signal), startAnswer(key, stop.signal)]);
    const refused = await callApi(gw.url, key, 'POST', `/discovery/v2/assistant/${domain}/message`, v2Body('one more?'));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('application/json');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit-limit')).toBe('2');
    expect(await refused.json()).toEqual({ error: expect.stringContaining('streams'), code: 'resource_exhausted', retryAfterSeconds: retryAfter });
    stop.abort();
    await eventually(() => gw.deps.streams.openStreams(id) === 0);
  });
});
