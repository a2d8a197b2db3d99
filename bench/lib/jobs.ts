// A gateway for agent-job creation benchmarks, and the floor those are measured against: the same MongoDB insert and
// the same workflow start that AgentJobService.createJob makes, called directly with the gateway's own clients.
import { randomBytes } from 'node:crypto';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { JobDoc } from '../../src/jobs/job';
import { JobLedger } from '../../src/jobs/ledger';
import { AgentJobService } from '../../src/agent/service';
import { workflowSummary } from '../../src/jobs/job-starter';
import type { Deps } from '../../src/deps';
import { agentJobWorkflowId } from '../../workflows/agent-job-contract';
import { AGENT_TASK_QUEUE, PROJECT_SEARCH_ATTRIBUTE, taskQueueName } from '../../workflows/task-queues';
import { startGateway, type RunningGateway } from '../../test/support/gateway';
import { jsonPoster } from './post-json';
import { benchEnv, terminateWorkflows } from './stack';

const projectKey = defineSearchAttributeKey(PROJECT_SEARCH_ATTRIBUTE, SearchAttributeType.KEYWORD);

export interface JobBench {
  gw: RunningGateway;
  projectId: string;
  adminKey: string;
  /** The floor: one job insert and one workflow start, as createJob makes them. */
  floorCreate(): Promise<void>;
  stop(): Promise<void>;
}

/** No worker polls this run's queues, so started workflows wait; clean-up terminates them. `limits: false` drops the quota. */
export async function startJobBench(run: string, opts: { limits: boolean }): Promise<JobBench> {
  const projectId = `bench-${run}`;
  const gw = await startGateway(
    // The model only has to be configured: no worker runs, so nothing calls it.
    benchEnv(run, { DOCENT_MODEL_PROVIDER: 'openai-compatible', DOCENT_MODEL: 'bench-model', DOCENT_MODEL_BASE_URL: 'http://127.0.0.1:9/' }),
    {
      prepare: (deps: Deps) =>
        opts.limits
          ? deps
          : {
              ...deps,
              agentJobs: new AgentJobService({
                config: deps.config,
                log: deps.log,
                tenancy: deps.tenancy,
                ledger: new JobLedger(deps.mongo.db),
                temporal: deps.temporal,
                gate: deps.forges.gate,
              }),
            },
    },
  );
  await gw.deps.tenancy.createOrg(`org-${run}`);
  await gw.deps.tenancy.createProject({ _id: projectId, orgId: `org-${run}`, repository: 'acme/widgets', ref: 'main' });
  const adminKey = (await gw.deps.keys.create({ kind: 'admin', orgId: `org-${run}`, projectId })).key;
  const { config } = gw.deps;
  const jobs = gw.deps.mongo.db.collection<JobDoc>('jobs');

  const floorCreate = async () => {
    const id = `job_${randomBytes(12).toString('hex')}`;
    const now = new Date();
    const prompt = 'benchmark instruction';
    const doc: JobDoc = {
      _id: id,
      projectId,
      status: 'active',
      source: { repository: 'acme/widgets', ref: 'main' },
      model: 'bench-model',
      branch: `${config.agent.branchPrefix}${id}`,
      prLink: null,
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
      turn: 1,
      prompts: [{ turn: 1, prompt, at: now }],
      asDraft: false,
    };
    await jobs.insertOne(doc);
    await gw.deps.temporal.workflow.start('agentJob', {
      workflowId: agentJobWorkflowId(id),
      taskQueue: taskQueueName(config.temporal.taskQueuePrefix, AGENT_TASK_QUEUE),
      typedSearchAttributes: [{ key: projectKey, value: projectId }],
      args: [
        {
          jobId: id,
          projectId,
          repository: doc.source.repository,
          baseRef: doc.source.ref,
          branch: doc.branch,
          model: doc.model,
          asDraft: false,
          first: { prompt, turn: 1, history: [] },
          heartbeatTimeoutMs: config.agent.heartbeatTimeoutMs,
          maxSteps: config.agent.maxSteps,
        },
      ],
      workflowIdConflictPolicy: 'USE_EXISTING',
      // What the Temporal Web UI shows for a job is part of the start, like the project search attribute above.
      ...workflowSummary(doc, prompt),
    });
  };

  return {
    gw,
    projectId,
    adminKey,
    floorCreate,
    async stop() {
      try {
        await terminateWorkflows(gw.deps.temporal, `${PROJECT_SEARCH_ATTRIBUTE} = "${projectId}"`, config.temporal.namespace);
      } finally {
        await gw.stop();
      }
    },
  };
}

/** POST /v2/agent/{p}/job over HTTP/1.1 (lib/post-json.ts); anything but 201 is a failed operation. */
export function restCreate(b: JobBench): () => Promise<void> {
  const url = `${b.gw.url}/v2/agent/${b.projectId}/job`;
  const body = JSON.stringify({ prompt: 'benchmark instruction' });
  const headers = { authorization: `Bearer ${b.adminKey}` };
  const post = jsonPoster();
  return async () => {
    const res = await post(url, headers, body);
    if (res.status !== 201) throw new Error(`HTTP ${res.status}: ${res.text.slice(0, 200)}`);
  };
}
