import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AgentService } from '../../src/gen/agent/v2/agent_pb';
import { startGateway, type RunningGateway } from '../support/gateway';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';
import { callApi, type JsonResponse } from '../support/http';
import { type Started, startWorkerProcess } from '../support/process';
import { agentWorkerEnv } from '../support/worker-env';
import { startScriptedModel, type ChatRequest, type ScriptedModel, type ScriptedTurn } from '../support/scripted-model';
import { createWidgetsProject } from '../support/projects';

// Issue 21 item 5 and issue 23 items 3-4 through the gateway over sockets, a worker process, real Temporal, MongoDB
// and git over HTTP: the model catalog (the provider double serves two models and records which one each call asked
// for), the diff of a two-turn job, and images with an instruction (the double checks image parts as each API would:
// chat completions, the Responses API and Anthropic Messages, each refusing an image over its own limit).

const token = 'ghs_docenttesttoken0123456789';
let git: GitServer;
let github: GitHubDouble;
let model: ScriptedModel;
let gw: RunningGateway;
let workspaceDir: string;
let worker: Started;
let adminKey: string;
let imageHost: http.Server;
let imageUrl: string;

const pngHeader = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
/** PNG magic and then noise: what docent checks is the magic, what the test checks is every byte reaching the model. */
const png = (size: number) => Buffer.concat([pngHeader, randomBytes(size - pngHeader.length)]);
const gif = Buffer.concat([Buffer.from('GIF89a'), randomBytes(64)]);
/** Past Anthropic's limit, within OpenAI's and docent's own. */
const bigPng = png(6 * 1024 * 1024);

const lastUser = (req: ChatRequest) => JSON.stringify(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
/** This turn's instruction, not the earlier ones a follow-up repeats. */
const instruction = (req: ChatRequest) => /Instruction: ([^"\\]*)/.exec(lastUser(req))?.[1] ?? '';

// Half a MiB of one-character lines: two such files fit a turn's change limit, and their diff is past the 1 MiB cap.
const bigFile = 'x\n'.repeat(250_000);

function script(req: ChatRequest): ScriptedTurn {
  const afterTool = req.messages.at(-1)?.role === 'tool';
  if (instruction(req).startsWith('add the logo')) {
    return afterTool
      ? { text: 'Add a logo and notes\n\nDone.' }
      : {
          toolCalls: [
            { name: 'write_file', args: { path: 'logo.bin', content: '\u0000\u0001PNG\u0000binary' } },
            { name: 'edit_file', args: { path: 'README.md', old: '# Widgets', new: '# Widgets, with a logo' } },
            // A repository's attributes must not hide a text change from the diff.
            { name: 'write_file', args: { path: '.gitattributes', content: 'README.md -diff\n' } },
          ],
        };
  }
  if (instruction(req).startsWith('add the big files')) {
    return afterTool
      ? { text: 'Add big files\n\nDone.' }
      : {
          toolCalls: [
            { name: 'write_file', args: { path: 'zz-big-1.txt', content: bigFile } },
            { name: 'write_file', args: { path: 'zz-big-2.txt', content: bigFile } },
          ],
        };
  }
  if (instruction(req).startsWith('write the notes')) {
    return afterTool ? { text: 'Add NOTES.md\n\nNotes.' } : { toolCalls: [{ name: 'write_file', args: { path: 'NOTES.md', content: 'notes\n' } }] };
  }
  return { text: 'No change needed\n\nNothing to do.' };
}

const catalog = () => [
  { name: model.modelId, provider: 'openai-compatible', prices: { input: 1, output: 2 } },
  { name: 'scripted-large', provider: 'openai-compatible', images: true },
  // The double speaks each provider's own API on these paths.
  { name: 'scripted-claude', provider: 'anthropic', baseUrl: model.anthropicBaseUrl, images: true },
  { name: 'scripted-gpt', provider: 'openai', baseUrl: model.openaiBaseUrl, images: true },
];
const allTypes = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];
/** Anthropic's 5 MB of base64, as bytes. */
const anthropicMaxBytes = (5 * 1024 * 1024 * 3) / 4;

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  model = await startScriptedModel(script, { otherModelIds: ['scripted-large', 'scripted-claude', 'scripted-gpt'] });
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-ws-'));
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n' });
  // A screenshot host on loopback, which the worker may reach only because the test allows that network.
  imageHost = http.createServer((req, res) => {
    if (req.url === '/shot.gif') res.writeHead(200, { 'content-type': 'image/gif' }).end(gif);
    else if (req.url === '/big.png') res.writeHead(200, { 'content-type': 'image/png' }).end(bigPng);
    else res.writeHead(200, { 'content-type': 'image/png' }).end('<html>not an image</html>');
  });
  await new Promise<void>((r) => imageHost.listen(0, '127.0.0.1', r));
  imageUrl = `http://127.0.0.1:${(imageHost.address() as AddressInfo).port}`;
  const models = { DOCENT_MODELS: JSON.stringify(catalog()), DOCENT_MODEL_BASE_URL: model.baseUrl, DOCENT_MODEL_API_KEY: model.apiKey };
  gw = await startGateway({ ...models, DOCENT_GITHUB_GIT_URL: git.url });
  adminKey = await createWidgetsProject(gw);
  worker = await startWorkerProcess({
    ...agentWorkerEnv({ gw, model, github, git, token, workspaceDir }),
    DOCENT_MODEL_PROVIDER: '',
    DOCENT_MODEL: '',
    DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.1/32',
    ...models,
  });
});

afterAll(async () => {
  await worker?.stop('SIGKILL');
  await gw?.stop();
  await Promise.all([git?.close(), github?.close(), model?.close(), new Promise((r) => imageHost?.close(r))]);
  await rm(workspaceDir, { recursive: true, force: true });
});

const api = (method: string, p: string, body?: unknown): Promise<JsonResponse> => callApi(gw.url, adminKey, method, p, body);
const rpc = () => createClient(AgentService, createConnectTransport({ baseUrl: gw.url, httpVersion: '1.1' }));
const asAdmin = () => ({ headers: { authorization: `Bearer ${adminKey}` } });

async function waitForJob(jobId: string): Promise<any> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const job = await (await api('GET', `/v2/agent/widgets/job/${jobId}`)).json();
    if (job.status !== 'active') return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still active`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the model catalog', () => {
  it('GET models lists the catalog, the default first, without endpoints or keys', async () => {
    const r = await api('GET', '/v2/agent/widgets/models');
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(JSON.parse(text)).toEqual({
      models: [
        { id: model.modelId, provider: 'openai-compatible', default: true, images: false, imageLimits: null, prices: { input: 1, output: 2 } },
        { id: 'scripted-large', provider: 'openai-compatible', default: false, images: true, imageLimits: { maxBytes: 10 * 1024 * 1024, maxImages: 5, mimeTypes: allTypes }, prices: null },
        { id: 'scripted-claude', provider: 'anthropic', default: false, images: true, imageLimits: { maxBytes: anthropicMaxBytes, maxImages: 5, mimeTypes: allTypes }, prices: null },
        { id: 'scripted-gpt', provider: 'openai', default: false, images: true, imageLimits: { maxBytes: 10 * 1024 * 1024, maxImages: 5, mimeTypes: allTypes }, prices: null },
      ],
    });
    expect(text).not.toContain(model.apiKey);
    expect(text).not.toContain(model.baseUrl);
    const listed = await rpc().listAgentModels({ projectId: 'widgets' }, asAdmin());
    expect(listed.models.map((m) => [m.id, m.isDefault, m.images])).toEqual([
      [model.modelId, true, false],
      ['scripted-large', false, true],
      ['scripted-claude', false, true],
      ['scripted-gpt', false, true],
    ]);
    expect(listed.models.find((m) => m.id === 'scripted-claude')?.imageLimits).toMatchObject({ maxBytes: anthropicMaxBytes, maxImages: 5, mimeTypes: allTypes });
  });

  it('a create naming a model outside the catalog gets 400 and starts nothing', async () => {
    const r = await api('POST', '/v2/agent/widgets/job', { prompt: 'write the notes', model: 'gpt-unlisted' });
    expect(r.status).toBe(400);
    const body = await r.json();
    expect(body.code).toBe('invalid_argument');
    expect(body.error).toContain('gpt-unlisted');
    const err = await rpc()
      .createAgentJob({ projectId: 'widgets', prompt: 'write the notes', model: 'gpt-unlisted' }, asAdmin())
      .catch((e: unknown) => e);
    expect(ConnectError.from(err).code).toBe(Code.InvalidArgument);
    expect((await (await api('GET', '/v2/agent/widgets/jobs')).json()).jobs).toEqual([]);
  });

  it('a job naming a catalog model calls that model, and its turns and cost name it', async () => {
    const r = await api('POST', '/v2/agent/widgets/job', { prompt: 'write the notes', model: 'scripted-large' });
    expect(r.status).toBe(201);
    const created = await r.json();
    expect(created.model).toBe('scripted-large');
    const job = await waitForJob(created.id);
    expect(job.status).toBe('completed');
    const calls = model.requests.filter((q) => lastUser(q).includes('write the notes'));
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(new Set(calls.map((q) => q.model))).toEqual(new Set(['scripted-large']));
    expect(job.turns[0]).toMatchObject({ model: 'scripted-large' });
    expect(job.turns[0].usage.costUsd).toBeUndefined();
    expect(model.rejected).toEqual([]);
  });

  it('a create naming no model uses the default, priced from its catalog entry', async () => {
    const created = await (await api('POST', '/v2/agent/widgets/job', { prompt: 'look around' })).json();
    expect(created.model).toBe(model.modelId);
    const job = await waitForJob(created.id);
    expect(job.status).toBe('completed');
    expect(model.requests.filter((q) => lastUser(q).includes('look around')).map((q) => q.model)).toEqual([model.modelId]);
    expect(job.turns[0]).toMatchObject({ model: model.modelId });
    expect(job.turns[0].usage.costUsd).toBeGreaterThan(0);
  });
});

describe('the diff of a job', () => {
  let jobId: string;
  const diff = (query = '') => api('GET', `/v2/agent/widgets/job/${jobId}/diff${query}`);

  beforeAll(async () => {
    jobId = (await (await api('POST', '/v2/agent/widgets/job', { prompt: 'add the logo' })).json()).id;
    expect((await waitForJob(jobId)).status).toBe('completed');
    expect((await api('POST', `/v2/agent/widgets/job/${jobId}/message`, { prompt: 'add the big files' })).status).toBe(200);
    expect((await waitForJob(jobId)).turns.map((t: { status: string }) => t.status)).toEqual(['completed', 'completed']);
  }, 120_000);

  it("one turn's diff is git's diff of its commit, binary files marked, attributes of the repository ignored", async () => {
    const r = await diff('?turn=1');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/x-diff; charset=utf-8');
    expect(r.headers.get('x-docent-diff-truncated')).toBe('false');
    const text = await r.text();
    const [first, second] = (await git.git('acme', 'widgets', 'rev-list', '--reverse', `main..docent/${jobId}`)).trim().split('\n');
    expect(text).toBe(await git.git('acme', 'widgets', 'diff', '--no-renames', `${first}~1`, first!));
    expect(text).toContain('Binary files /dev/null and b/logo.bin differ');
    expect(text).toContain('+# Widgets, with a logo');
    expect(text).not.toContain('zz-big');
    const two = await (await diff('?turn=2')).text();
    expect(two).toContain('diff --git a/zz-big-1.txt b/zz-big-1.txt');
    expect(two).not.toContain('logo.bin');
    // Cut, but what it shows is git's diff of the second commit.
    const firstFile = await git.git('acme', 'widgets', 'diff', '--no-renames', first!, second!, '--', 'zz-big-1.txt');
    expect(two.startsWith(firstFile)).toBe(true);
  });

  it('the whole diff is the branch against its base, cut at the cap with a note', async () => {
    const r = await diff();
    expect(r.headers.get('x-docent-diff-truncated')).toBe('true');
    const text = await r.text();
    expect(text).toContain('Binary files /dev/null and b/logo.bin differ');
    expect(text).toContain('+# Widgets, with a logo');
    expect(text).toContain('diff --git a/zz-big-1.txt b/zz-big-1.txt');
    expect(text).toMatch(/\n# docent: the diff was cut at 1 MiB; the whole change is on the branch docent\/job_\w+\n$/);
    expect(Buffer.byteLength(text)).toBeLessThan(1024 * 1024 + 200);
    const rpcDiff = await rpc().getAgentJobDiff({ projectId: 'widgets', jobId }, asAdmin());
    expect(rpcDiff).toMatchObject({ diff: text, truncated: true });
    expect((await rpc().getAgentJobDiff({ projectId: 'widgets', jobId, turn: 1 }, asAdmin())).truncated).toBe(false);
  });

  it('a turn the job does not have is 404, a malformed one 400', async () => {
    expect(await (await diff('?turn=3')).json()).toMatchObject({ code: 'not_found' });
    const bad = await diff('?turn=first');
    expect(bad.status).toBe(400);
    expect((await bad.json()).code).toBe('invalid_argument');
  });
});

describe('images with an instruction', () => {
  const userParts = (q: ChatRequest) => q.messages.find((m) => m.role === 'user')?.content as Array<{ type: string; image_url?: { url: string } }>;
  const create = (body: object) => api('POST', '/v2/agent/widgets/job', { prompt: 'match the screenshot', model: 'scripted-large', ...body });

  it('an image of the largest size given as bytes reaches the model as an image part, and stays out of Temporal history', async () => {
    const shot = png(10 * 1024 * 1024);
    const r = await create({ images: [{ mimeType: 'image/png', data: shot.toString('base64') }] });
    expect(r.status).toBe(201);
    const job = await waitForJob((await r.json()).id);
    expect(job.status).toBe('completed');
    const call = model.requests.find((q) => instruction(q).startsWith('match the screenshot'))!;
    const parts = userParts(call);
    expect(parts.map((p) => p.type)).toEqual(['text', 'image_url']);
    expect(parts[1]!.image_url!.url).toBe(`data:image/png;base64,${shot.toString('base64')}`);
    const history = await gw.deps.temporal.workflow.getHandle(`agent-job-${job.id}`).fetchHistory();
    expect(JSON.stringify(history).length).toBeLessThan(shot.length);
    expect(model.rejected).toEqual([]);
  });

  it('an image URL is fetched by the worker; a follow-up takes images too, and over Connect past 1 MiB', async () => {
    const created = await (await create({ prompt: 'copy the diagram', images: [{ url: `${imageUrl}/shot.gif` }] })).json();
    expect((await waitForJob(created.id)).status).toBe('completed');
    const call = model.requests.find((q) => instruction(q).startsWith('copy the diagram'))!;
    expect(userParts(call)[1]!.image_url!.url).toBe(`data:image/gif;base64,${gif.toString('base64')}`);

    const big = png(2 * 1024 * 1024);
    await rpc().sendAgentJobMessage({ projectId: 'widgets', jobId: created.id, prompt: 'now this one', images: [{ mimeType: 'image/png', source: { case: 'data', value: big } }] }, asAdmin());
    expect((await waitForJob(created.id)).turns).toHaveLength(2);
    const followUp = model.requests.find((q) => instruction(q).startsWith('now this one'))!;
    expect(userParts(followUp)[1]!.image_url!.url).toBe(`data:image/png;base64,${big.toString('base64')}`);
  });

  it('a URL that is not an image fails the turn with a clear error', async () => {
    const created = await (await create({ prompt: 'look at the page', images: [{ url: `${imageUrl}/page.html` }] })).json();
    const job = await waitForJob(created.id);
    expect(job.error).toMatchObject({ code: 'image_refused' });
    expect(job.error.message).toContain('not a PNG, JPEG, WebP or GIF image');
    expect(model.requests.some((q) => instruction(q).startsWith('look at the page'))).toBe(false);
  });

  it('refuses bad images with 400 before anything starts', async () => {
    const refusal = async (body: object, message: RegExp) => {
      const r = await create(body);
      const answer = await r.json();
      expect([r.status, answer.code]).toEqual([400, 'invalid_argument']);
      expect(answer.error).toMatch(message);
    };
    const before = (await (await api('GET', '/v2/agent/widgets/jobs?limit=100')).json()).jobs.length;
    await refusal({ images: [{ mimeType: 'image/png', data: Buffer.from('GIF89a-but-called-png').toString('base64') }] }, /images\[0\]: declared image\/png, but the bytes are image\/gif/);
    await refusal({ images: [{ mimeType: 'image/png', data: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64') }] }, /not a PNG, JPEG, WebP or GIF image/);
    await refusal({ images: [{ mimeType: 'image/png', data: png(10 * 1024 * 1024 + 1).toString('base64') }] }, /scripted-large \(openai-compatible\) takes at most 10 MB \(10485760 bytes\) per image/);
    await refusal({ images: Array.from({ length: 6 }, () => ({ mimeType: 'image/gif', data: gif.toString('base64') })) }, /at most 5 images/);
    await refusal({ images: [{ url: 'file:///etc/passwd' }] }, /http\(s\) URL/);
    // The default model's catalog entry does not take images.
    await refusal({ model: undefined, images: [{ mimeType: 'image/gif', data: gif.toString('base64') }] }, new RegExp(`model ${model.modelId} does not take images`));
    const err = await rpc()
      .createAgentJob({ projectId: 'widgets', prompt: 'x', model: 'scripted-large', images: [{ mimeType: 'image/jpeg', source: { case: 'data', value: Buffer.from('hello') } }] }, asAdmin())
      .catch((e: unknown) => e);
    expect(ConnectError.from(err).code).toBe(Code.InvalidArgument);
    expect((await (await api('GET', '/v2/agent/widgets/jobs?limit=100')).json()).jobs).toHaveLength(before);
  });

  it('takes a large body only on the routes with images, and reads it only for a valid key', async () => {
    const large = { prompt: 'x', images: [{ mimeType: 'image/png', data: png(2 * 1024 * 1024).toString('base64') }] };
    const anonymous = await callApi(gw.url, 'docent_admin_not-a-key', 'POST', '/v2/agent/widgets/job', large);
    expect(anonymous.status).toBe(401);
    const elsewhere = await api('POST', '/v2/agent/widgets/job/job_none/stop', large);
    expect(elsewhere.status).toBe(400);
    expect((await elsewhere.json()).error).toMatch(/request body is larger than/);
  });

  describe("each provider's own API and limits", () => {
    const asked = (prompt: string) => model.requests.filter((q) => instruction(q).startsWith(prompt));

    it("an image over Anthropic's limit is 400 for an anthropic model, naming the limit; the same image goes to an openai model through the Responses API", async () => {
      const image = { mimeType: 'image/png', data: bigPng.toString('base64') };
      const refused = await create({ prompt: 'too big for claude', model: 'scripted-claude', images: [image] });
      expect(refused.status).toBe(400);
      const answer = await refused.json();
      expect(answer.code).toBe('invalid_argument');
      expect(answer.error).toBe('images[0]: the image is 6 MB (6291456 bytes); scripted-claude (anthropic) takes at most 3.75 MB (3932160 bytes) per image; Anthropic counts 5 MB of base64');
      const overConnect = await rpc()
        .createAgentJob({ projectId: 'widgets', prompt: 'too big for claude', model: 'scripted-claude', images: [{ mimeType: 'image/png', source: { case: 'data', value: bigPng } }] }, asAdmin())
        .catch((e: unknown) => e);
      expect(ConnectError.from(overConnect).code).toBe(Code.InvalidArgument);
      expect(ConnectError.from(overConnect).rawMessage).toContain('takes at most 3.75 MB');
      expect(asked('too big for claude')).toEqual([]);

      const taken = await create({ prompt: 'fine for gpt', model: 'scripted-gpt', images: [image] });
      expect(taken.status).toBe(201);
      expect((await waitForJob((await taken.json()).id)).status).toBe('completed');
      const [first] = asked('fine for gpt');
      expect(first?.api).toBe('responses');
      expect(first?.imageParts).toEqual([expect.objectContaining({ type: 'input_image', image_url: `data:image/png;base64,${image.data}` })]);
      expect(model.rejected).toEqual([]);
    });

    it('the largest image Anthropic takes reaches the Messages API as a base64 image block; a follow-up over the limit is 400', async () => {
      const largest = png(anthropicMaxBytes);
      const r = await create({ prompt: 'as large as claude takes', model: 'scripted-claude', images: [{ mimeType: 'image/png', data: largest.toString('base64') }] });
      expect(r.status).toBe(201);
      const jobId = (await r.json()).id;
      expect((await waitForJob(jobId)).status).toBe('completed');
      const [first] = asked('as large as claude takes');
      expect(first?.api).toBe('messages');
      expect(first?.imageParts).toEqual([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: largest.toString('base64') } }]);
      expect(model.rejected).toEqual([]);

      const followUp = await api('POST', `/v2/agent/widgets/job/${jobId}/message`, { prompt: 'and this one', images: [{ mimeType: 'image/png', data: bigPng.toString('base64') }] });
      expect(followUp.status).toBe(400);
      expect(await followUp.json()).toEqual({ code: 'invalid_argument', error: expect.stringContaining('scripted-claude (anthropic) takes at most 3.75 MB') });
      expect((await waitForJob(jobId)).turns).toHaveLength(1);
    });

    it("an image URL over the model's limit fails the turn naming the limit, before the model is asked", async () => {
      const created = await (await create({ prompt: 'fetch the big one', model: 'scripted-claude', images: [{ url: `${imageUrl}/big.png` }] })).json();
      const job = await waitForJob(created.id);
      expect(job.error).toEqual({
        code: 'image_refused',
        message: `the image ${imageUrl}/big.png is refused: it is larger than 3.75 MB (3932160 bytes), the most scripted-claude (anthropic) takes per image`,
      });
      expect(asked('fetch the big one')).toEqual([]);
    });
  });
});
