// `npm run soak -- --minutes N [--seed S] [--faults kind,kind] [--fault-count K] [--projects P]`: a private stack,
// two gateways and two workers under mixed load while a fault loop kills and restarts every part; then a drain, a
// snapshot of the stores and the checker (soak/check.ts). Everything goes into one run folder, printed first.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { ApiKeyStore } from '../src/auth/api-keys';
import { runDocsIngest } from '../src/cli/docs-ingest';
import { loadConfig } from '../src/config';
import { ProjectWebhookSecrets } from '../src/github/webhook-secrets';
import { createMongo, ensureIndexes } from '../src/store/mongo';
import { TenancyStore } from '../src/tenancy/store';
import { githubConversation } from '../test/support/github-double-conversation';
import { backedBy, startGitHubDouble } from '../test/support/github-double';
import { startGitServer } from '../test/support/git-server';
import { repositoryRoot } from '../test/support/process';
import { startScriptedModel, modelSettings } from '../test/support/scripted-model';
import { checkRunFolder } from './check';
import { soakModelReply, startReceivers } from './lib/doubles';
import { faultKinds, runFaults, type FaultKind } from './lib/faults';
import { member, type Member } from './lib/fleet';
import { historyWriter } from './lib/history';
import { runLoad, type LoadContext, type SoakProject } from './lib/load';
import { privateStack } from './lib/private-stack';
import { seeded } from './lib/prng';
import { readSnapshot, type RunLayout } from './lib/read-snapshot';

const exec = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (line: string) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`);

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '2' },
    seed: { type: 'string' },
    faults: { type: 'string', default: faultKinds.join(',') },
    'fault-count': { type: 'string' },
    projects: { type: 'string', default: '3' },
    'drain-minutes': { type: 'string', default: '6' },
    'workspace-mb': { type: 'string', default: '256' },
  },
});
const minutes = Number(values.minutes);
const seed = values.seed ? Number(values.seed) : randomBytes(4).readUInt32BE();
const kinds = values.faults!.split(',').filter(Boolean) as FaultKind[];
for (const k of kinds) if (!faultKinds.includes(k)) throw new Error(`unknown fault ${k}; known: ${faultKinds.join(', ')}`);
const faultCount = Number(values['fault-count'] ?? Math.max(kinds.length, Math.round(minutes * 1.5)));
const run = randomBytes(3).toString('hex');
const runDir = path.join(repositoryRoot, 'soak-runs', `${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}-${seed}`);
const token = 'ghs_soaktoken0123456789abcdef';
const jobsPerProjectHour = 30;
const heartbeatMs = 10_000;
// Each worker's sweep of clones whose jobs ended (DOCENT_WORKSPACE_SWEEP_MS); the snapshot waits two of them after the drain.
const workspaceSweepMs = 10_000;

async function main() {
  mkdirSync(runDir, { recursive: true });
  const record = historyWriter(path.join(runDir, 'history.jsonl'));
  say(`seed ${seed}; run folder ${runDir}`);
  record({ kind: 'meta', at: Date.now(), what: 'seed', seed });
  const rng = seeded(seed);
  const cleanups: Array<() => Promise<unknown>> = [];
  const cleanup = async () => {
    for (const c of cleanups.reverse()) await c().catch((e: unknown) => say(`clean-up: ${(e as Error).message}`));
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  try {
    say('starting the private stack (temporal 17233, ferretdb 27117, elasticsearch 9280)');
    const stack = await privateStack(runDir);
    cleanups.push(() => stack.stop());
    await stack.start();

    // Each worker's workspace: a tmpfs of its own size, so filling it hits a limit without touching the machine's disk.
    const workspaces = [0, 1].map((i) => path.join(runDir, `workspace-${i}`));
    const tmpDirs = [0, 1].map((i) => path.join(runDir, `tmp-${i}`));
    for (const [i, ws] of workspaces.entries()) {
      mkdirSync(ws, { recursive: true });
      mkdirSync(tmpDirs[i]!, { recursive: true });
      await exec('mount', ['-t', 'tmpfs', '-o', `size=${values['workspace-mb']}m`, 'tmpfs', ws]);
      cleanups.push(() => exec('umount', ['-l', ws]));
    }

    const git = await startGitServer(token);
    const conversation = githubConversation(() => github.pulls);
    const github = await startGitHubDouble({ token, ...backedBy(git), routes: conversation.routes });
    conversation.setRole('octo-member', 'write');
    const model = await startScriptedModel(soakModelReply);
    const receivers = await startReceivers(path.join(runDir, 'received.jsonl'));
    cleanups.push(() => Promise.all([git.close(), github.close(), model.close(), receivers.close()]));

    say('bundling workflows once for every worker start');
    const bundle = path.join(runDir, 'workflow-bundle.js');
    const { code } = await bundleWorkflowCode({ workflowsPath: path.join(repositoryRoot, 'dist/workflows/index.js'), logger: new DefaultLogger('WARN') });
    writeFileSync(bundle, code);

    const secretKey = randomBytes(32).toString('base64');
    const settings = {
      DOCENT_HTTP_PORT: '0',
      DOCENT_GRPC_PORT: '0',
      DOCENT_MONGO_DB: `docent_soak_${run}`,
      DOCENT_TASK_QUEUE_PREFIX: `soak-${run}-`,
      DOCENT_ES_INDEX_PREFIX: `soak-${run}`,
      DOCENT_LOG_LEVEL: 'info',
      DOCENT_WORKFLOW_BUNDLE: bundle,
      ...modelSettings(model),
      DOCENT_GITHUB_API_URL: github.apiUrl,
      DOCENT_GITHUB_GIT_URL: git.url,
      DOCENT_GITHUB_TOKEN: token,
      // The soak's tenants all use the deployment's token.
      DOCENT_GITHUB_SHARED_ORGS: '*',
      DOCENT_GITHUB_WEBHOOK_SECRET: 'whsec-soak-0123456789abcdef',
      DOCENT_SECRET_KEY: secretKey,
      DOCENT_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8',
      DOCENT_AGENT_HEARTBEAT_TIMEOUT_MS: String(heartbeatMs),
      DOCENT_AGENT_CLONE_WAIT_MS: '5000',
      DOCENT_WORKSPACE_SWEEP_MS: String(workspaceSweepMs),
      DOCENT_LIMIT_JOBS_PER_HOUR: String(jobsPerProjectHour),
      // The 2-core machine runs other work too: dependency checks get more than the 2 s default.
      DOCENT_DEPENDENCY_TIMEOUT_MS: '5000',
    };
    const env = () => ({ ...settings, ...stack.env });
    const config = loadConfig(env());
    const layout: RunLayout = { mongoUrl: stack.env.DOCENT_MONGO_URL!, db: settings.DOCENT_MONGO_DB, workspaces, tmpDirs };
    writeFileSync(path.join(runDir, 'run.json'), JSON.stringify(layout, null, 2));
    record({ kind: 'meta', at: Date.now(), what: 'start', settings: { minutes, kinds, faultCount, jobsPerProjectHour, heartbeatMs, projects: Number(values.projects) } });

    // Orgs, projects and keys through the stores, as an operator's CLI makes them.
    const mongo = createMongo(config.mongo.url, config.mongo.db, 10_000);
    cleanups.push(() => mongo.client.close());
    await ensureIndexes(mongo.db);
    const tenancy = new TenancyStore(mongo.db);
    const keys = new ApiKeyStore(mongo.db);
    const githubSecrets = new ProjectWebhookSecrets(mongo.db, Buffer.from(secretKey, 'base64'));
    const projects: SoakProject[] = [];
    for (let i = 0; i < Number(values.projects); i++) {
      const owner = `org${i}`;
      const id = `soak-p${i}`;
      const domain = `p${i}.soak.test`;
      await git.createRepo(owner, 'repo', { 'README.md': `# Project ${i}\n` });
      await tenancy.createOrg(owner);
      await tenancy.createProject({ _id: id, orgId: owner, repository: `${owner}/repo`, ref: 'main', domain });
      const adminKey = (await keys.create({ kind: 'admin', orgId: owner, projectId: id })).key;
      const assistantKey = (await keys.create({ kind: 'assistant', orgId: owner, projectId: id, domain })).key;
      const githubSecret = await githubSecrets.issue(id, `${owner}/repo`);
      projects.push({ id, owner, repo: 'repo', domain, adminKey, assistantKey, githubSecret });
    }

    const gateways = [0, 1].map((i) => member(runDir, `gateway-${i}`, 'gateway', env));
    const workers = [0, 1].map((i) => member(runDir, `worker-${i}`, 'worker', () => ({ ...env(), DOCENT_WORKSPACE_DIR: workspaces[i]!, TMPDIR: tmpDirs[i]! })));
    const fleet: Member[] = [...gateways, ...workers];
    cleanups.push(() => Promise.all(fleet.map((m) => m.signal('SIGCONT').then(() => m.signal('SIGKILL')))));
    say('starting two gateways and two workers');
    await Promise.all(fleet.map((m) => m.start()));

    // Each project's webhook endpoint, through the REST API with its admin key.
    for (const p of projects) {
      const res = await fetch(`${gateways[0]!.url}/v2/agent/${p.id}/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receivers.urlFor(p.id), events: ['agent_job.completed', 'agent_job.failed', 'agent_job.archived', 'agent_job.turn_finished', 'agent_job.plan_ready'] }),
      });
      const body = (await res.json()) as any;
      if (res.status !== 201) throw new Error(`webhook endpoint for ${p.id}: HTTP ${res.status} ${JSON.stringify(body)}`);
      receivers.bind(p.id, body.id, body.secret);
    }

    const sample = () => {
      for (const m of fleet) {
        const rss = m.rssBytes();
        if (rss !== undefined) record({ kind: 'memory', at: Date.now(), role: m.role, name: m.name, pid: m.current!.child.pid!, rssBytes: rss });
      }
    };
    const ctx: LoadContext = { rng, record, gateways: () => gateways.flatMap((g) => (g.url ? [g.url] : [])), projects, github, conversation, receivers, config, jobs: new Map() };
    say('ingesting each project’s docs');
    await Promise.all(projects.map((p) => ingestDocs(ctx, p)));
    sample();
    const sampler = setInterval(sample, 15_000);
    cleanups.push(async () => clearInterval(sampler));

    const until = Date.now() + minutes * 60_000;
    say(`load and ${faultCount} faults (${kinds.join(', ')}) for ${minutes} min`);
    // The load runs `minutes`, and on until every enabled kind has struck once: a kind whose turn came after the load
    // tested nothing, and the checker fails such a run (soak/invariants.ts, faultsStruck).
    let everyKindTried = false;
    let extended = false;
    const keepGoing = () => {
      if (Date.now() < until || everyKindTried) return Date.now() < until;
      if (!extended) say('the load goes on past its minutes: a fault kind has not had its turn yet');
      extended = true;
      return true;
    };
    record({ kind: 'meta', at: Date.now(), what: 'load-start' });
    await Promise.all([
      runLoad(ctx, keepGoing, { everyMs: 1500, inFlight: 6 }).then(() => record({ kind: 'meta', at: Date.now(), what: 'load-end' })),
      runFaults({ rng, record, gateways, workers, stack, receivers, workspaces, pauseMs: heartbeatMs + 5000 }, kinds, faultCount, until, () => {
        everyKindTried = true;
      }),
    ]);

    say('draining: every fault healed, waiting for the jobs to end');
    for (const m of fleet) if (!m.current) await m.start();
    const temporal = new Client({ connection: await Connection.connect({ address: stack.env.DOCENT_TEMPORAL_ADDRESS! }) });
    cleanups.push(() => temporal.connection.close());
    await drain(ctx, mongo.db, temporal, Number(values['drain-minutes']) * 60_000);
    record({ kind: 'meta', at: Date.now(), what: 'drain-end' });
    // A clone a job's own removal missed goes at a worker's next sweep (docs/reliability.md, invariant 8).
    say(`waiting two workspace sweeps (${(2 * workspaceSweepMs) / 1000} s) before reading the workspaces`);
    await sleep(2 * workspaceSweepMs);
    sample();

    // What GitHub holds, dumped for the checker.
    writeFileSync(
      path.join(runDir, 'pulls.json'),
      JSON.stringify(github.pulls.map((p) => ({ number: p.number, repository: /github\.test\/([^/]+\/[^/]+)\//.exec(p.html_url)?.[1] ?? '?', head: p.head, state: 'open' }))),
    );
    writeFileSync(path.join(runDir, 'github-rejected.json'), JSON.stringify(github.rejected, null, 2));
    const branches = [];
    for (const p of projects) {
      const out = await git.git(p.owner, p.repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads');
      branches.push(
        ...out
          .split('\n')
          .filter(Boolean)
          .map((name) => ({ repository: `${p.owner}/${p.repo}`, name })),
      );
    }
    writeFileSync(path.join(runDir, 'branches.json'), JSON.stringify(branches));
    writeFileSync(path.join(runDir, 'snapshot.json'), JSON.stringify(await readSnapshot(runDir, layout)));
    record({ kind: 'meta', at: Date.now(), what: 'end' });
    const { verdicts, report } = await checkRunFolder(runDir);
    writeFileSync(path.join(runDir, 'report.txt'), `${report}\n`);
    console.log(report);
    say(`seed ${seed}; ${verdicts.filter((v) => !v.holds).length} invariant(s) broken; run folder ${runDir}`);
    process.exitCode = verdicts.every((v) => v.holds) ? 0 : 1;
  } finally {
    say('stopping everything the soak started');
    await cleanup();
  }
}

/** The docs every project's assistant answers from, ingested once before the load. */
async function ingestDocs(ctx: LoadContext, p: SoakProject) {
  await runDocsIngest(ctx.config, { domain: p.domain, source: path.join(repositoryRoot, 'test/fixtures/docs/mini'), baseUrl: `https://${p.domain}` }, () => undefined);
}

/**
 * Approves plans still waiting (a person would), then waits until no job is active and no agent-job or webhook-delivery
 * workflow runs (clones removed, deliveries retried to the end), or the deadline.
 */
async function drain(ctx: LoadContext, db: import('mongodb').Db, temporal: Client, ms: number) {
  const deadline = Date.now() + ms;
  const running = async () =>
    Number(
      (
        await temporal.workflowService.countWorkflowExecutions({
          namespace: 'default',
          query: 'ExecutionStatus = "Running" AND (WorkflowType = "agentJob" OR WorkflowType = "webhookDelivery")',
        })
      ).count ?? 0,
    );
  while (Date.now() < deadline) {
    const active = await db
      .collection('jobs')
      .find({ status: 'active' }, { projection: { projectId: 1, planStatus: 1, planRevision: 1 } })
      .toArray();
    const workflows = await running().catch(() => -1);
    if (active.length === 0 && workflows === 0) return;
    for (const j of active.filter((x) => x.planStatus === 'awaiting')) {
      const p = ctx.projects.find((x) => x.id === j.projectId)!;
      const url = ctx.gateways()[0]!;
      const start = Date.now();
      const res = await fetch(`${url}/v2/agent/${p.id}/job/${j._id}/approve`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ revision: j.planRevision }),
      }).catch(() => undefined);
      ctx.record({ kind: 'op', op: 'job.approve', start, end: Date.now(), ok: res?.status === 200, status: res?.status, project: p.id, jobId: String(j._id), detail: { drain: true } });
    }
    say(`drain: ${active.length} job(s) active, ${workflows} agent-job or delivery workflow(s) running`);
    await sleep(5000);
  }
  say('drain: deadline passed with work still running (the invariants show what)');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 2;
});
