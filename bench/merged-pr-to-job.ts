// merged-pr-to-job: a merged pull request's signed delivery (POST /github/webhook, App mode) until the automation's
// job is active, vs POST /v2/agent/{p}/job on the same gateway: what the GitHub trigger adds to a job start (signature,
// delivery and subject claims, the hand-off to the delivery's durable step, the automation lookup, the diff from the
// GitHub double, the run's claim and record).
import { bundleWorkflowCode, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { temporalConnectionOptions, temporalDataConverter } from '../src/temporal/connection';
import type { githubDelivery } from '../workflows/github-delivery';
import { githubDeliveryWorkflowId } from '../workflows/github-delivery-contract';
import { createTestApp } from '../test/support/github-app-double';
import { startGitHubDouble, type PullRequest } from '../test/support/github-double';
import { githubConversation } from '../test/support/github-double-conversation';
import { pullRequestClosed, signedDelivery } from '../test/support/github-webhooks';
import { startGateway } from '../test/support/gateway';
import { installTestRuntime } from '../test/support/temporal-runtime';
import { PROJECT_SEARCH_ATTRIBUTE, taskQueueName, WEBHOOK_TASK_QUEUE } from '../workflows/task-queues';
import type { Benchmark } from './lib/bench';
import { alternate, closedLoop, p50s, p99s, pooled } from './lib/blocks';
import { restCreate } from './lib/jobs';
import { jsonPoster } from './lib/post-json';
import { benchEnv, runId, terminateWorkflows } from './lib/stack';
import { fmtMs, fmtRatio, median, medianRatio } from './lib/stats';

const rounds = 8;
const opsPerBlock = 12;
const secret = 'whsec-bench-merged-pr-0123456789abcdef';

export const mergedPrToJob: Benchmark = {
  name: 'merged-pr-to-job',
  summary: "a merged pull request's signed delivery until the docs-from-code job is active vs a REST job create",
  async run(ctx) {
    const run = runId();
    const projectId = `bench-${run}`;
    const app = createTestApp();
    const conversation = githubConversation(() => github.pulls);
    // No git behind the double: the trigger reads only the pull request's diff.
    const github = await startGitHubDouble({ app, branchHead: async () => null, repoExists: async () => true, routes: conversation.routes });
    github.install('acme', 'docs');
    github.install('acme', 'code');
    const gw = await startGateway(
      benchEnv(run, {
        DOCENT_MODEL_PROVIDER: 'openai-compatible',
        DOCENT_MODEL: 'bench-model',
        DOCENT_MODEL_BASE_URL: 'http://127.0.0.1:9/',
        DOCENT_GITHUB_API_URL: github.apiUrl,
        DOCENT_GITHUB_GIT_URL: 'https://github.test',
        DOCENT_GITHUB_APP_ID: app.id,
        DOCENT_GITHUB_APP_PRIVATE_KEY: app.privateKeyPem,
        DOCENT_GITHUB_WEBHOOK_SECRET: secret,
        DOCENT_AUTOMATION_RUNS_PER_DAY: '1000000',
        DOCENT_AUTOMATION_RUNS_PER_PROJECT_DAY: '1000000',
      }),
    );
    const { config } = gw.deps;
    installTestRuntime(config);
    // The delivery's work runs in a durable step on the webhook queue: a worker polls that queue alone, so the
    // automation's job workflows (agent queue) still wait and are terminated at the end.
    const connection = await NativeConnection.connect(temporalConnectionOptions(config.temporal));
    const worker = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: taskQueueName(config.temporal.taskQueuePrefix, WEBHOOK_TASK_QUEUE),
      workflowBundle: await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows'), logger: Runtime.instance().logger }),
      activities: createActivities({ config, db: gw.deps.mongo.db, es: gw.deps.es, workerIdentity: 'bench-worker', temporal: gw.deps.temporal }),
      dataConverter: temporalDataConverter(config.temporal),
      identity: 'bench-worker',
    });
    const running = worker.run();
    try {
      await gw.deps.tenancy.createOrg(`org-${run}`);
      await gw.deps.tenancy.createProject({ _id: projectId, orgId: `org-${run}`, repository: 'acme/docs', ref: 'main' });
      const adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: `org-${run}`, projectId })).key;
      const created = await fetch(`${gw.url}/v2/agent/${projectId}/automations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'docs from code',
          trigger: { type: 'merged_pull_request', repo: 'acme/code' },
          instruction: 'Update the docs.',
          output: 'pull_request',
          contextRepositories: [{ repo: 'acme/code' }],
        }),
      });
      if (created.status !== 201) throw new Error(`automation create: HTTP ${created.status}`);

      const post = jsonPoster();
      let next = 1000;
      const delivered = async () => {
        const number = next++;
        const pr: PullRequest = {
          number,
          title: `Change ${number}`,
          body: 'A change.',
          draft: false,
          head: `f-${number}`,
          base: 'main',
          headSha: `${number}`.padStart(40, 'a'),
          html_url: `https://github.test/acme/code/pull/${number}`,
        };
        github.pulls.push(pr);
        conversation.setDiff(number, `diff --git a/src/a.js b/src/a.js\n--- a/src/a.js\n+++ b/src/a.js\n@@ -1 +1 @@\n-a ${number}\n+b ${number}\n`);
        const d = await signedDelivery(secret, 'pull_request', pullRequestClosed('acme', 'code', pr, true));
        const res = await post(`${gw.url}/github/webhook`, d.headers, d.body);
        // Answered 202 once recorded and handed off; the step's result comes once the job is recorded and its workflow started.
        if (res.status !== 202 || !res.text.includes('"queued"')) throw new Error(`HTTP ${res.status}: ${res.text.slice(0, 200)}`);
        const done = await gw.deps.temporal.workflow.getHandle<typeof githubDelivery>(githubDeliveryWorkflowId(config.temporal.taskQueuePrefix, d.id)).result();
        if (done.outcome !== 'automation_started') throw new Error(`the delivery's step: ${done.outcome} (${done.reason ?? 'no reason'})`);
      };
      const r = await alternate({
        rounds,
        baseline: () => closedLoop(restCreate({ gw, projectId, adminKey, floorCreate: async () => undefined, stop: async () => undefined }), { concurrency: 1, ops: opsPerBlock }),
        subject: () => closedLoop(delivered, { concurrency: 1, ops: opsPerBlock }),
      });
      const errors = r.subject.reduce((n, b) => n + b.errors, 0);
      const row = {
        bench: 'merged-pr-to-job',
        case: 'c=1',
        ratio: `p50 ${fmtRatio(medianRatio(p50s(r.subject), p50s(r.baseline)))}, p99 ${fmtRatio(medianRatio(p99s(r.subject), p99s(r.baseline)))}`,
        target: 'reported, no target yet',
        met: null,
        subject: `p50 ${fmtMs(median(p50s(r.subject)))}, p99 ${fmtMs(pooled(r.subject, 99))}${errors ? `, ${errors} failed` : ''}`,
        baseline: `p50 ${fmtMs(median(p50s(r.baseline)))}, p99 ${fmtMs(pooled(r.baseline, 99))}`,
      };
      ctx.log(`${row.case}: ${row.ratio}`);
      return {
        rows: [row],
        notes: [
          `${rounds} pairs of blocks of ${opsPerBlock} after a warm-up pair, c=1. The gateway answers the delivery 202 once it is recorded and handed to its durable step; a worker polls only the webhook queue, and the subject ends when that step returns, once the job is recorded and its workflow started (no worker polls the agent queue, so each job's workflow waits and is terminated at the end).`,
          "The floor is the REST create of a job on the same gateway. The subject adds the signature check, the delivery and subject claims, the step's workflow start and its activity on the worker, the automation lookup, the pull request's diff from the GitHub double (an installation token, cached after the first), the run's claim and its record on the delivery.",
        ],
      };
    } finally {
      try {
        await terminateWorkflows(gw.deps.temporal, `${PROJECT_SEARCH_ATTRIBUTE} = "${projectId}"`, gw.deps.config.temporal.namespace);
      } finally {
        worker.shutdown();
        await running.catch(() => undefined);
        await connection.close();
        await gw.stop();
        await github.close();
      }
    }
  },
};
