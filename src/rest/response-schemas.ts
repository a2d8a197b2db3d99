import { z } from 'zod';
import { jobOrigins } from '../jobs/job';

// Response bodies of the REST routes: /openapi.json describes them, and each reply is encoded through them, so the
// document cannot drift from what is sent. Schemas with an id become components of the document.

/** Schemas that /openapi.json lists under components.schemas, by id. */
export const documentedSchemas = z.registry<{ id: string }>();

const errorCodes = [
  'invalid_argument',
  'failed_precondition',
  'unauthenticated',
  'permission_denied',
  'not_found',
  'already_exists',
  'aborted',
  'resource_exhausted',
  'unimplemented',
  'unavailable',
  'internal',
] as const;

/** The one error shape of every REST error. */
export const errorBody = z
  .object({
    error: z.string().describe('A message for people'),
    code: z.enum(errorCodes).describe("The Connect error code; the HTTP status follows Connect's table"),
    retryAfterSeconds: z.number().int().min(0).optional().describe('When to try again, on resource_exhausted'),
  })
  .register(documentedSchemas, { id: 'Error' });

const checkResult = z.object({
  kind: z.enum(['setup', 'check']),
  command: z.string(),
  exitCode: z.number().int(),
  durationMs: z.number(),
  output: z.string().describe('The last 4 KiB of its output'),
  stoppedBy: z.enum(['timeout', 'disk', 'cancelled']).optional(),
  cache: z.enum(['hit', 'miss', 'off']).optional().describe("Setup entries: restored from the worker's setup cache (hit), run and stored (miss), or run without it (off)"),
});

const gapAnswer = z.object({ relevance: z.number().nullable(), answered: z.boolean(), topPath: z.string().nullable() });
const gapCheckBody = z.object({
  turn: z.number().int(),
  commit: z.string(),
  previewIndex: z.string(),
  checkedAt: z.iso.datetime(),
  questions: z.array(z.object({ question: z.string(), before: gapAnswer, after: gapAnswer })),
  fixed: z.number().int().describe('Questions unanswered before and answered after'),
});

export const agentJobBody = z
  .object({
    id: z.string(),
    status: z.enum(['active', 'completed', 'archived', 'failed']),
    source: z
      .object({
        repository: z.string().describe("The repository's URL on its forge (Mintlify's meaning)"),
        ref: z.string().describe("The branch the agent works on (Mintlify's meaning; the same as branch)"),
        name: z.string().describe('The repository as the project names it (owner/name)'),
        baseRef: z.string().describe('The ref the job started from'),
      })
      .describe("Over REST, as Mintlify gives it; the Connect API's source is {repository: owner/name, ref: the base ref}"),
    model: z.string(),
    prLink: z.string().nullable().describe('The pull request; null while active, or when the agent changed no file'),
    createdAt: z.iso.datetime(),
    archivedAt: z.iso.datetime().nullable(),
    updatedAt: z.iso.datetime(),
    branch: z.string(),
    turn: z.number().int().describe('The latest turn: 1 for the first instruction, one more per follow-up. A follow-up answers with the turn it got'),
    checks: z.array(checkResult).describe("The latest turn's sandboxed setup and check commands"),
    checksPassed: z.boolean().nullable(),
    origin: z.enum(jobOrigins).describe('Where the job came from: an API call, or what an automation answered (docs/automations.md)'),
    instruction: z.string().describe("The job's first instruction, cut at 280 characters (the whole one is in turns)"),
    automationId: z.string().optional().describe('The automation whose run started the job'),
    error: z.object({ code: z.string(), message: z.string() }).optional().describe('Why a failed job failed'),
    gap: z
      .object({ domain: z.string(), questions: z.array(z.string()), threadIds: z.array(z.string()) })
      .optional()
      .describe('Gap-loop jobs: the questions they answer and their threads'),
    gapCheck: gapCheckBody.optional().describe("Gap-loop jobs: the questions re-asked against the pushed branch's docs"),
    requirePlanApproval: z.literal(true).optional().describe('Plan jobs only (the fields below too): the first turn plans, and edits once the plan is approved'),
    awaitingApproval: z.boolean().optional().describe('The job is active and waits for POST …/approve, or for a message that asks for another plan'),
    plan: z.string().nullable().optional().describe('The latest plan, Markdown, at most 16 KiB; null until the agent wrote one'),
    planRevision: z.number().int().optional().describe('1 for the first plan, one more per revision; 0 before any'),
    contextRepositories: z
      .array(z.object({ repo: z.string(), ref: z.string().optional() }))
      .optional()
      .describe('Read-only repositories the agent may list, read and search beside its own; absent when none'),
    forgeId: z.string().describe("The forge connection whose credential the job's clones, pushes and pull request use (`deployment`: the deployment's own)"),
  })
  .register(documentedSchemas, { id: 'AgentJob' });

const fileStat = z.object({ path: z.string(), additions: z.number().int(), deletions: z.number().int() });

const turnBody = z
  .object({
    turn: z.number().int(),
    prompt: z.string(),
    model: z.string().describe('The model the turn called'),
    status: z.enum(['active', 'completed', 'failed', 'stopped']),
    startedAt: z.iso.datetime(),
    finishedAt: z.iso.datetime().nullable(),
    filesChanged: z.array(fileStat).describe('Lines added and deleted per file by the commit the turn pushed'),
    usage: z.object({
      inputTokens: z.number().int(),
      outputTokens: z.number().int(),
      costUsd: z.number().optional().describe("From the model's catalog prices (DOCENT_MODELS or DOCENT_MODEL_PRICES); absent when it has none"),
    }),
    checks: z.array(checkResult),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    prLink: z.string().nullable().describe('The pull request this turn opened or updated'),
    projectInstructions: z
      .union([z.object({ path: z.string(), bytes: z.number().int(), truncated: z.boolean() }), z.object({ path: z.string(), refused: z.string() })])
      .nullable()
      .describe(
        "The repository's AGENTS.md the agent was given (`.docent/AGENTS.md` wins), its size and whether it was cut at 16 KiB; or why the one found was not read; null when there is none or the turn has not started",
      ),
  })
  .register(documentedSchemas, { id: 'AgentJobTurn' });

export const agentJobWithTurnsBody = agentJobBody.extend({ turns: z.array(turnBody) }).register(documentedSchemas, { id: 'AgentJobWithTurns' });

export const jobEventBody = z
  .object({
    id: z.number().int().describe('Grows by one per event of the job: the SSE id to resume after'),
    type: z.enum(['status', 'turn.started', 'step', 'check', 'egress', 'commit', 'pull_request', 'turn.finished', 'plan.ready', 'plan.revision', 'plan.approved']),
    turn: z.number().int(),
    at: z.iso.datetime(),
    data: z
      .record(z.string(), z.unknown())
      .describe(
        'status: {status} (archived: also `by`, pull_request_merged or pull_request_closed, when GitHub archived it); step: a model call {kind: model, step, inputTokens, outputTokens, costUsd, toolCalls, finishReason, startedAt, durationMs} or a tool call {kind: tool, step, tool, path, args, exitCode, stoppedBy, output, error, startedAt, durationMs}, bounded and redacted (docs/agent-jobs.md, Events); check: {kind, command, exitCode, durationMs, output}; egress: {host, port, method, allowed, reason, bytesOut, bytesIn} (past 50 a turn, one {summary, connections, rows}); commit: {sha, filesChanged}; pull_request: {url}; turn.finished: {status, usage, prLink, error}; plan.ready: {revision, plan}; plan.revision: {revision, feedback}; plan.approved: {revision}',
      ),
  })
  .register(documentedSchemas, { id: 'AgentJobEvent' });

const webhookEndpointBody = z.object({ id: z.string(), url: z.string(), events: z.array(z.string()), createdAt: z.iso.datetime() }).register(documentedSchemas, { id: 'WebhookEndpoint' });

export const createdWebhookBody = webhookEndpointBody.extend({ secret: z.string().describe('The whsec_… signing secret: shown only in this answer') });
export const webhookListBody = z.object({ webhooks: z.array(webhookEndpointBody) });
export const webhookDeliveriesBody = z.object({
  deliveries: z.array(
    z.object({
      messageId: z.string().describe('The webhook-id header of every attempt of this message'),
      type: z.string(),
      attempt: z.number().int(),
      at: z.iso.datetime(),
      status: z.number().int().nullable(),
      ok: z.boolean(),
      durationMs: z.number(),
      error: z.string().optional(),
    }),
  ),
});
export const redeliveryBody = z.object({ messageId: z.string(), endpointId: z.string(), redelivering: z.literal(true) });
export const deletedBody = z.object({ id: z.string(), deleted: z.literal(true) });

export const v1SessionBody = z
  .object({
    sessionId: z.string().describe("The job's id"),
    subdomain: z.string().describe("The project's docs domain, else the project's id"),
    branch: z.string().nullable().describe('The branch the agent works on'),
    haulted: z.boolean().describe("Mintlify's spelling: the job is no longer active"),
    haultReason: z.enum(['completed', 'github_missconfigured', 'error', 'processing', 'interrupted']),
    pullRequestLink: z.string().optional(),
    messageToUser: z.string().optional().describe("The latest turn's summary, or why it failed"),
    todos: z
      .array(z.object({ id: z.string(), content: z.string(), status: z.enum(['pending', 'in_progress', 'completed', 'cancelled']), priority: z.enum(['high', 'medium', 'low']) }))
      .describe('One per instruction (turn): docent keeps no other to-do list'),
    title: z.string().describe("The latest pull request title, else the instruction's first line"),
    createdAt: z.iso.datetime(),
  })
  .register(documentedSchemas, { id: 'MintlifyV1Session' });

export const v1SessionListBody = z.object({ allSessions: z.array(v1SessionBody) });

export const agentJobPageBody = z.object({ jobs: z.array(agentJobBody), nextCursor: z.string().nullable() }).register(documentedSchemas, { id: 'AgentJobPage' });

export const agentModelsBody = z
  .object({
    models: z.array(
      z.object({
        id: z.string().describe("What a create's `model` takes"),
        provider: z.enum(['openai', 'anthropic', 'openai-compatible']),
        default: z.boolean().describe('Used when a create names no model'),
        images: z.boolean().describe('Takes images with an instruction'),
        imageLimits: z
          .object({
            maxBytes: z.number().int().describe('Bytes of one image, before base64; larger ones are refused with 400'),
            maxImages: z.number().int().describe('Images with one instruction'),
            mimeTypes: z.array(z.string()).describe('Image types it takes'),
          })
          .nullable()
          .describe("What the model's provider takes of images (never more than docent's own 10 MB and 5 images); null when it takes none"),
        prices: z.object({ input: z.number(), output: z.number() }).nullable().describe('USD per million tokens; null when the operator gave none'),
      }),
    ),
  })
  .register(documentedSchemas, { id: 'AgentModels' });

export const searchResultsBody = z
  .object({
    results: z.array(z.object({ path: z.string(), url: z.string(), title: z.string(), headings: z.array(z.string()), content: z.string(), score: z.number() })),
    searchId: z.string().optional().describe('Names this search when reporting a result opened (POST …/search/{domain}/click)'),
  })
  .register(documentedSchemas, { id: 'SearchResults' });

export const mintlifySearchBody = z
  .array(
    z.object({
      content: z.string(),
      path: z.string().describe("The page's path inside the docs, without its file extension"),
      metadata: z.object({ title: z.string(), url: z.string(), headings: z.array(z.string()).describe('The heading trail of the passage'), score: z.number() }),
    }),
  )
  .register(documentedSchemas, { id: 'MintlifySearchResults' });

export const originCheckBody = z.object({ origin: z.string(), allowed: z.boolean() }).register(documentedSchemas, { id: 'OriginCheck' });

export const pageBody = z.object({ path: z.string(), content: z.string() }).register(documentedSchemas, { id: 'Page' });

export const pageNotFoundBody = errorBody.extend({ message: z.string().describe("The same as error: Mintlify's name for it") });

const dependencyHealth = z.object({ ok: z.boolean(), latencyMs: z.number(), error: z.string().optional() });

export const readinessBody = z
  .object({ ready: z.boolean(), dependencies: z.object({ mongodb: dependencyHealth, elasticsearch: dependencyHealth, temporal: dependencyHealth }) })
  .register(documentedSchemas, { id: 'Readiness' });

export const livenessBody = z.object({ status: z.literal('ok') });
