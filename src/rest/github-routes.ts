import { z } from 'zod';
import type { Deps } from '../deps';
import { deliveryToJson, GitHubDeliveryStore } from '../github/deliveries';
import { syncOnPush } from '../docs/sync-schedule';
import { GitHubWebhookService } from '../github/webhook-service';
import { ProjectWebhookSecrets } from '../github/webhook-secrets';
import { projectOrigins } from '../edge/cors';
import { route, type Route } from './router';

const outcome = z.enum(['processing', 'turn_started', 'archived', 'answered_archived', 'refused', 'ignored', 'docs_sync_started', 'automation_started', 'duplicate']);

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
  const service = new GitHubWebhookService({
    config: deps.config,
    log: deps.log,
    forges: deps.forges.registry,
    syncDocsOnPush: (repository, ref, forgeId, mayStart) =>
      syncOnPush({ temporal: deps.temporal, taskQueuePrefix: deps.config.temporal.taskQueuePrefix, gitBaseUrl: deps.config.github.gitUrl }, repository, ref, forgeId, mayStart),
    agentJobs: deps.agentJobs,
    jobById: (jobId) => deps.jobLedger.jobs.byId(jobId),
    deliveries: new GitHubDeliveryStore(deps.mongo.db),
    tenancy: deps.tenancy,
    projectSecrets: new ProjectWebhookSecrets(deps.mongo.db, deps.config.secretKey),
    automations: deps.automations.forEvents,
  });
  return [
    route({
      method: 'POST',
      path: '/github/webhook',
      summary:
        "GitHub's webhooks (issue_comment, issues, pull_request_review_comment, pull_request, push), verified with X-Hub-Signature-256: with a GitHub App its DOCENT_GITHUB_WEBHOOK_SECRET, with a token the own secret of a project on the delivery's repository (docent project webhook-secret); 404 while neither can be",
      // GitHub holds no key: the signature over the body is the credential, checked before more than its repository is read.
      auth: 'none',
      rawBody: true,
      responses: { 200: { description: 'What was done with the delivery (a delivery, or its comment or pull request, seen before: duplicate, nothing done)', json: receivedBody } },
      handler: async (req) => ({ status: 200, body: await service.receive(req.headers, req.rawBody) }),
    }),
    route({
      method: 'POST',
      path: '/forges/{forgeId}/webhook',
      summary:
        "A forge connection's webhooks (the same events as /github/webhook), verified with X-Hub-Signature-256 under that connection's own secret; each acts only on the projects, jobs and automations of the connection's organization whose repositories resolve through it",
      auth: 'none',
      rawBody: true,
      responses: { 200: { description: "What was done with the delivery; another organization's job or project is ignored, with the reason", json: receivedBody } },
      handler: async (req) => ({ status: 200, body: await service.receiveForConnection(req.params.forgeId!, req.headers, req.rawBody) }),
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
