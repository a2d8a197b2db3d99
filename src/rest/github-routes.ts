import { z } from 'zod';
import type { Deps } from '../deps';
import { deliveryToJson, GitHubDeliveryStore } from '../github/deliveries';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import { GitHubWebhookService, type Received } from '../github/webhook-service';
import type { githubDelivery } from '../../workflows/github-delivery';
import { githubDeliveryWorkflowId } from '../../workflows/github-delivery-contract';
import { taskQueueName, WEBHOOK_TASK_QUEUE } from '../../workflows/task-queues';
import { ProjectWebhookSecrets } from '../github/webhook-secrets';
import { projectOrigins } from '../edge/cors';
import { route, type Route } from './router';

const outcome = z.enum(['processing', 'queued', 'failed', 'turn_started', 'archived', 'answered_archived', 'refused', 'ignored', 'docs_sync_started', 'automation_started', 'duplicate']);

const receivedBody = z.object({
  id: z.string().describe('X-GitHub-Delivery'),
  outcome,
  reason: z.string().optional().describe('Why it was ignored or refused'),
});

export const githubDeliveriesBody = z.object({
  deliveries: z.array(
    z.object({
      id: z.string().describe('X-GitHub-Delivery'),
      event: z.string().describe('X-GitHub-Event'),
      action: z.string().nullable(),
      repository: z.string().nullable(),
      pullNumber: z.number().int().nullable(),
      author: z.string().nullable().describe("The comment's author"),
      jobId: z.string().nullable(),
      turn: z.number().int().nullable().describe('The turn a comment started'),
      automationRuns: z
        .array(z.object({ automationId: z.string(), status: z.enum(['started', 'refused', 'failed']), jobId: z.string().nullable(), reason: z.string().nullable() }))
        .describe("What the project's automations did with the delivery's event (issues, merged pull requests, pushes)"),
      outcome,
      reason: z.string().nullable(),
      receivedAt: z.iso.datetime(),
    }),
  ),
});

/** GitHub's webhooks (pull-request comments steer jobs; a closed pull request archives its job) and their log. */
export function githubRoutes(deps: Deps): Route[] {
  const prefix = deps.config.temporal.taskQueuePrefix;
  const service = new GitHubWebhookService({
    config: deps.config,
    log: deps.log,
    forges: deps.forges.registry,
    deliveries: new GitHubDeliveryStore(deps.mongo.db),
    tenancy: deps.tenancy,
    projectSecrets: new ProjectWebhookSecrets(deps.mongo.db, deps.config.secretKey),
    handOff: (input) =>
      deps.temporal.workflow
        .start<typeof githubDelivery>('githubDelivery', {
          taskQueue: taskQueueName(prefix, WEBHOOK_TASK_QUEUE),
          workflowId: githubDeliveryWorkflowId(prefix, input.key),
          // A record's step runs once, even after it finished: a redelivery that finds it queued starts nothing new.
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          args: [input],
        })
        .then(
          () => undefined,
          (err: unknown) => {
            if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
          },
        ),
  });
  // Settled at once: 200 with the outcome; handed to its durable step: 202, and the deliveries log says what it did.
  const answer = (body: Received) => ({ status: body.outcome === 'queued' ? 202 : 200, body });
  return [
    route({
      method: 'POST',
      path: '/github/webhook',
      summary:
        "GitHub's webhooks (issue_comment, issues, pull_request_review_comment, pull_request, push), verified with X-Hub-Signature-256: with a GitHub App its DOCENT_GITHUB_WEBHOOK_SECRET, with a token the own secret of a project on the delivery's repository (docent project webhook-secret); 404 while neither can be",
      // GitHub holds no key: the signature over the body is the credential, checked before more than its repository is read.
      auth: 'none',
      rawBody: true,
      responses: {
        200: { description: 'The delivery asks nothing of docent (its outcome, e.g. ignored), or was seen before (duplicate: nothing done)', json: receivedBody },
        202: { description: "Recorded and queued: its work runs after the answer, and the project's deliveries log shows what was done", json: receivedBody },
      },
      handler: async (req) => answer(await service.receive(req.headers, req.rawBody)),
    }),
    route({
      method: 'POST',
      path: '/forges/{forgeId}/webhook',
      summary:
        "A forge connection's webhooks (the same events as /github/webhook), verified with X-Hub-Signature-256 under that connection's own secret; each acts only on the projects, jobs and automations of the connection's organization whose repositories resolve through it",
      auth: 'none',
      rawBody: true,
      responses: {
        200: { description: 'The delivery asks nothing of docent (its outcome), or was seen before (duplicate)', json: receivedBody },
        202: { description: "Recorded and queued: the connection's deliveries log shows what was done; another organization's job or project is ignored there, with the reason", json: receivedBody },
      },
      handler: async (req) => answer(await service.receiveForConnection(req.params.forgeId!, req.headers, req.rawBody)),
    }),
    route({
      method: 'GET',
      path: '/v2/agent/{projectId}/github/deliveries',
      summary: "GitHub webhook deliveries about the project's repository, newest first, with what was done or why not (last 30 days, at most 100)",
      auth: 'admin',
      cors: projectOrigins(deps.tenancy, deps.config.corsOrigins),
      responses: { 200: { description: 'The deliveries', json: githubDeliveriesBody } },
      handler: async (req) => ({ status: 200, body: { deliveries: (await service.deliveries(req.caller, req.params.projectId!)).map(deliveryToJson) } }),
    }),
  ];
}
