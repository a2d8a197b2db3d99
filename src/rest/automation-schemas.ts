import { z } from 'zod';
import { jobOrigins } from '../jobs/job';
import { documentedSchemas } from './response-schemas';

const trigger = z.discriminatedUnion('type', [
  z.object({ type: z.literal('schedule'), cron: z.string(), timeZone: z.string() }),
  z.object({ type: z.literal('push'), repo: z.string().optional(), branch: z.string() }),
  z.object({ type: z.literal('merged_pull_request'), repo: z.string() }),
  z.object({ type: z.literal('issue'), label: z.string().optional() }),
  z.object({ type: z.literal('unanswered_questions'), threshold: z.number().int() }),
  z.object({ type: z.literal('manual') }),
]);

export const automationBody = z
  .object({
    id: z.string(),
    name: z.string(),
    trigger: trigger.describe('What starts a run besides POST …/trigger (docs/automations.md)'),
    instruction: z.string(),
    output: z.enum(['pull_request', 'update_pull_request']),
    contextRepositories: z.array(z.object({ repo: z.string(), ref: z.string().optional() })),
    requirePlanApproval: z.boolean(),
    model: z.string().nullable(),
    paused: z.boolean().describe('A paused automation starts nothing; a run that still arrives is recorded as refused'),
    consecutiveFailures: z.number().int().describe('Runs in a row whose job could not be admitted'),
    lastError: z.object({ message: z.string(), at: z.iso.datetime() }).nullable(),
    lastCheck: z
      .object({
        at: z.iso.datetime(),
        since: z.iso.datetime().describe('The start of the window counted: the last gap-loop run, or the automation'),
        questions: z.number().int().describe('Unanswered or down-rated questions in the window'),
        readers: z.number().int().describe('The readers who asked them (one per client address): what `threshold` counts'),
        threshold: z.number().int(),
        runId: z.string().nullable().describe('The run this check started, if it reached the threshold'),
        reason: z.string().nullable().describe('Why no run started'),
      })
      .optional()
      .describe("An unanswered_questions automation's latest hourly check"),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .register(documentedSchemas, { id: 'Automation' });

export const automationListBody = z.object({ automations: z.array(automationBody) }).register(documentedSchemas, { id: 'AutomationList' });

export const automationRunBody = z
  .object({
    id: z.string(),
    eventKey: z.string().describe('The event the run answered (the scheduled time, or a manual trigger); one run per event'),
    origin: z.enum(jobOrigins),
    status: z.enum(['starting', 'started', 'refused', 'failed']),
    jobId: z.string().nullable(),
    turn: z.number().int().nullable().describe("The job's turn the run started: 1 for a new job, more when an update_pull_request automation continued its open one"),
    reason: z.string().nullable().describe('Why a refused or failed run started no job'),
    createdAt: z.iso.datetime(),
  })
  .register(documentedSchemas, { id: 'AutomationRun' });

export const automationRunListBody = z.object({ runs: z.array(automationRunBody) }).register(documentedSchemas, { id: 'AutomationRunList' });

export const mintlifyTriggerBody = z
  .object({
    schemaId: z.string().describe('The automation triggered (Mintlify: the workflow schema)'),
    instanceId: z.string().describe('Its run: GET /v2/agent/{projectId}/automations/{automationId}/runs lists it'),
    jobId: z.string().describe('The agent job the run started (GET /v2/agent/{projectId}/job/{jobId})'),
  })
  .register(documentedSchemas, { id: 'MintlifyAutomationTrigger' });
