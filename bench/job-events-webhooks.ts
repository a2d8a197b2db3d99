// job-events-webhooks: (1) webhook delivery latency, from the moment a job's end is recorded to the signed
// agent_job.completed reaching a receiver, vs a workflow whose one activity POSTs to the same receiver; (2) the event
// stream's overhead: when an SSE client receives a job's final status event vs a poller reading MongoDB directly, on
// the same job at the same time.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createEsClient } from '../src/search/es-client';
import { Client as TemporalClient } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Webhook } from 'standardwebhooks';
import { createActivities } from '../activities';
import { workspaceQueueName } from '../activities/agent-job/workspace-queue';
import { JobEventStore } from '../src/jobs/job-events';
import { createLogger } from '../src/log';
import { createMongo } from '../src/store/mongo';
import { installTemporalRuntime } from '../src/worker-build';
import { AGENT_TASK_QUEUE, taskQueueName, WEBHOOK_TASK_QUEUE } from '../workflows/task-queues';
import { startGateway } from '../test/support/gateway';
import { backedBy, startGitHubDouble } from '../test/support/github-double';
import { startGitServer } from '../test/support/git-server';
import { readEventStream } from '../test/support/sse';
import type { Benchmark } from './lib/bench';
import { benchEnv, runId } from './lib/stack';
import { fmtMs, fmtRatio, median, medianDifference, medianRatio } from './lib/stats';

const token = 'ghs_benchtoken0123456789';
const rounds = 4;
const perBlock = 2;

/** A receiver that verifies each delivery and notes when it arrived, by job id (or floor id). */
async function startReceiver() {
  const arrivals = new Map<string, number>();
  let secret = '';
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const at = Date.now();
    const raw = Buffer.concat(chunks).toString('utf8');
    const body = JSON.parse(raw) as { floorId?: string; data?: { job?: { id: string } } };
    if (body.floorId) arrivals.set(body.floorId, at);
    else {
      new Webhook(secret).verify(raw, req.headers as Record<string, string>);
      arrivals.set(body.data!.job!.id, at);
    }
    res.writeHead(204).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    setSecret: (s: string) => {
      secret = s;
    },
    async waitFor(id: string, timeoutMs = 60_000): Promise<number> {
      const deadline = Date.now() + timeoutMs;
      while (!arrivals.has(id)) {
        if (Date.now() > deadline) throw new Error(`no delivery for ${id}`);
        await new Promise((r) => setTimeout(r, 5));
      }
      return arrivals.get(id)!;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export const jobEventsWebhooks: Benchmark = {
  name: 'job-events-webhooks',
  summary: 'job end → signed webhook at a receiver vs a one-activity POST workflow; SSE final-status latency vs a direct MongoDB poller',
  async run(ctx) {
    const model = await ctx.model();
    const run = runId();
    const git = await startGitServer(token);
    const github = await startGitHubDouble({ token, ...backedBy(git) });
    await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n\nHello world\n' });
    const workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'docent-bench-ws-'));
    const receiver = await startReceiver();
    const gw = await startGateway(
      benchEnv(run, {
        ...model.env,
        DOCENT_MODEL_API_KEY: model.apiKey,
        DOCENT_GITHUB_GIT_URL: git.url,
        DOCENT_GITHUB_API_URL: github.apiUrl,
        DOCENT_GITHUB_TOKEN: token,
        DOCENT_WORKSPACE_DIR: workspaceDir,
        DOCENT_SECRET_KEY: randomBytes(32).toString('base64'),
        DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
      }),
    );
    const { config } = gw.deps;
    try {
      installTemporalRuntime(config, createLogger('silent', 'bench-worker'));
    } catch {
      // installed already in this process
    }
    const connection = await NativeConnection.connect({ address: config.temporal.address });
    const mongo = createMongo(config.mongo.url, config.mongo.db, config.dependencyTimeoutMs);
    const es = createEsClient(config.elasticsearch);
    const temporal = new TemporalClient({ connection, namespace: config.temporal.namespace });
    const activities = {
      ...createActivities({ config, db: mongo.db, es, workerIdentity: 'bench-worker', temporal }),
      benchPost: async (url: string, body: string) => {
        const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        if (!r.ok) throw new Error(`receiver answered ${r.status}`);
      },
    };
    const workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./lib/webhook-floor-workflows'), logger: Runtime.instance().logger });
    const agentQueue = taskQueueName(config.temporal.taskQueuePrefix, AGENT_TASK_QUEUE);
    const webhookQueue = taskQueueName(config.temporal.taskQueuePrefix, WEBHOOK_TASK_QUEUE);
    const workers = await Promise.all(
      [agentQueue, webhookQueue].map((taskQueue) => Worker.create({ connection, namespace: config.temporal.namespace, taskQueue, workflowBundle, activities, identity: 'bench-worker' })),
    );
    // A turn's steps after its clone go to the worker's own queue, as in src/worker-build.ts.
    workers.push(
      await Worker.create({
        connection,
        namespace: config.temporal.namespace,
        taskQueue: workspaceQueueName(config.temporal.taskQueuePrefix, config.agent.workspaceDir),
        activities,
        identity: 'bench-worker',
      }),
    );
    const running = Promise.all(workers.map((w) => w.run()));
    try {
      const projectId = `bench-${run}`;
      await gw.deps.tenancy.createOrg(`org-${run}`);
      await gw.deps.tenancy.createProject({ _id: projectId, orgId: `org-${run}`, repository: 'acme/widgets', ref: 'main' });
      const adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: `org-${run}`, projectId })).key;
      const { secret } = await gw.deps.webhooks.create(projectId, { url: receiver.url, events: ['agent_job.completed'] });
      receiver.setSecret(secret);
      const events = new JobEventStore(mongo.db);

      /** One job: webhook latency (end recorded → receiver) and the final status event's arrival by SSE and by a direct poller. */
      const job = async () => {
        const r = await fetch(`${gw.url}/v2/agent/${projectId}/job`, {
          method: 'POST',
          headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ prompt: 'add a note' }),
        });
        const { id } = (await r.json()) as { id: string };
        if (r.status !== 201) throw new Error(`create answered ${r.status}`);
        let sseAt = 0;
        const sse = readEventStream(`${gw.url}/v2/agent/${projectId}/job/${id}/events`, adminKey, {
          stopWhen: (list) => {
            if (list.at(-1)?.type === 'status' && list.at(-1)?.data.status !== 'active') sseAt = Date.now();
            return sseAt > 0;
          },
        });
        // The floor of the stream: the same query, polled at the same interval, straight from MongoDB.
        const poll = (async () => {
          let last = 0;
          for (;;) {
            for (const e of await events.after(id, last)) {
              last = e.seq;
              if (e.type === 'status' && e.data.status !== 'active') return { at: Date.now(), storedAt: e.at.getTime() };
            }
            await new Promise((res) => setTimeout(res, 250));
          }
        })();
        const arrived = await receiver.waitFor(id);
        const [polled] = await Promise.all([poll, sse]);
        const doc = await mongo.db.collection<{ _id: string; status: string; updatedAt: Date }>('jobs').findOne({ _id: id });
        if (doc?.status !== 'completed') throw new Error(`job ended ${doc?.status}`);
        return { webhookMs: arrived - doc.updatedAt.getTime(), sseMs: sseAt - polled.storedAt, pollMs: polled.at - polled.storedAt };
      };
      const floor = async () => {
        const floorId = `floor-${randomBytes(6).toString('hex')}`;
        const t = Date.now();
        await temporal.workflow.start('postOnce', { taskQueue: webhookQueue, workflowId: floorId, args: [receiver.url, JSON.stringify({ floorId, data: {} })] });
        return (await receiver.waitFor(floorId)) - t;
      };

      await job(); // warm-up: clone, bundle caches, connections
      await floor();
      const webhook = { subject: [] as number[], floor: [] as number[] };
      const stream = { subject: [] as number[], floor: [] as number[] };
      for (let round = 0; round < rounds; round++) {
        const floors: number[] = [];
        for (let i = 0; i < perBlock; i++) floors.push(await floor());
        const jobs = [];
        for (let i = 0; i < perBlock; i++) jobs.push(await job());
        webhook.floor.push(median(floors));
        webhook.subject.push(median(jobs.map((j) => j.webhookMs)));
        stream.subject.push(median(jobs.map((j) => j.sseMs)));
        stream.floor.push(median(jobs.map((j) => j.pollMs)));
        ctx.log(
          `round ${round + 1}: webhook ${jobs.map((j) => j.webhookMs).join(', ')} ms vs floor ${floors.join(', ')} ms; SSE ${jobs.map((j) => j.sseMs).join(', ')} ms vs poller ${jobs.map((j) => j.pollMs).join(', ')} ms`,
        );
      }
      const webhookRatio = medianRatio(webhook.subject, webhook.floor);
      const streamAdded = medianDifference(stream.subject, stream.floor);
      return {
        rows: [
          {
            bench: 'job-events-webhooks',
            case: 'webhook delivery: job end recorded → signed agent_job.completed at the receiver',
            ratio: `p50 ${fmtRatio(webhookRatio)}`,
            target: '—',
            met: null,
            subject: `p50 ${fmtMs(median(webhook.subject))}`,
            baseline: `p50 ${fmtMs(median(webhook.floor))}`,
            note: 'floor: workflow.start of a workflow whose one activity POSTs the body to the same receiver (no signing, no endpoint lookup, no message store).',
          },
          {
            bench: 'job-events-webhooks',
            case: 'event stream: final status event stored → received over SSE',
            ratio: `p50 +${fmtMs(streamAdded)}`,
            target: '—',
            met: null,
            subject: `p50 ${fmtMs(median(stream.subject))}`,
            baseline: `p50 ${fmtMs(median(stream.floor))}`,
            note: 'floor: the same query polled every 250 ms straight from MongoDB, on the same job at the same time; both wait for a poll, so the difference is the gateway (auth, SSE encoding, HTTP).',
          },
        ],
        notes: [`${rounds} rounds of ${perBlock} floor deliveries then ${perBlock} agent jobs (scripted model, local git over HTTP, GitHub double), after a warm-up job and delivery.`],
      };
    } finally {
      for (const w of workers) w.shutdown();
      await running.catch(() => undefined);
      await Promise.allSettled([connection.close(), mongo.client.close(), es.close()]);
      await gw.stop();
      await Promise.allSettled([git.close(), github.close(), receiver.close()]);
      await rm(workspaceDir, { recursive: true, force: true });
    }
  },
};
