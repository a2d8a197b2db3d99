import { z } from 'zod';
import { jobOrigins } from '../jobs/job';
import { maxImageBytes, maxImages } from '../jobs/job-images';
import type { ImageInput } from './images';
import { MAX_CONTEXT_REPOSITORIES } from '../../workflows/agent-job-contract';

export const maxPromptChars = 32 * 1024;

/** An instruction: at least one character after trimming, at most 32 KiB. */
export const prompt = z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(maxPromptChars, `must be at most ${maxPromptChars} characters`);

// What git accepts as a branch name, minus the odd corners no one needs here.
export const refName = z
  .string()
  .max(200)
  .regex(/^(?!\/|.*\/\/|.*\.\.|.*@\{|.*\.lock$|.*\/$)[A-Za-z0-9._/-]+$/, 'must be a valid branch name');

// Base64 of the largest image, so a larger one is refused before it is decoded.
const maxImageBase64Chars = Math.ceil(maxImageBytes / 3) * 4;

/** `images` of a REST create or follow-up: bytes in base64 with their type, or a URL; decoded here, checked by content in ./images. */
const images = z
  .array(
    z.union([
      z.strictObject({
        mimeType: z.string().max(100),
        data: z
          .string()
          .max(maxImageBase64Chars, `must be at most ${maxImageBytes / 1024 / 1024} MB`)
          .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64'),
      }),
      z.strictObject({ url: z.string().max(2048) }),
    ]),
  )
  // Counted here too, so six images are refused before any is decoded.
  .max(maxImages, `at most ${maxImages} images may go with an instruction`)
  .transform((list): ImageInput[] => list.map((i) => ('url' in i ? { url: i.url } : { mimeType: i.mimeType, data: Buffer.from(i.data, 'base64') })));

/** The largest create or follow-up: five of the largest images in base64, and the rest of the body. */
export const maxInstructionBodyBytes = maxImages * maxImageBase64Chars + 256 * 1024;
/** The same as one Connect message, whose images are bytes. */
export const maxInstructionMessageBytes = maxImages * maxImageBytes + 256 * 1024;

/** A model of the catalog, by name (GET /v2/agent/{projectId}/models). */
export const modelName = z
  .string()
  .max(200)
  .regex(/^[A-Za-z0-9._:/@-]+$/, 'must be a model id');

/** `contextRepositories` of a create: read-only repositories beside the project's own, each checked further by src/agent/context-repositories.ts. */
const contextRepositories = z
  .array(z.strictObject({ repo: z.string().trim().min(1, 'must not be empty').max(500), ref: refName.optional() }))
  .max(MAX_CONTEXT_REPOSITORIES, `at most ${MAX_CONTEXT_REPOSITORIES} context repositories may go with a job`);

export const createJobBody = z.strictObject({
  prompt,
  branch: refName.optional(),
  model: modelName.optional(),
  asDraft: z.boolean().optional(),
  images: images.optional(),
  requirePlanApproval: z.boolean().optional(),
  contextRepositories: contextRepositories.optional(),
});
export type CreateJob = z.infer<typeof createJobBody>;

export const sendMessageBody = z.strictObject({ prompt, images: images.optional() });
/** An approval names the plan revision the client read (the job's `planRevision`); src/agent/plan-revision.ts says what none (or no body) means. */
export const approvePlanBody = z.strictObject({ revision: z.number().int().min(1).max(1_000_000).optional() }).nullish();

export const idempotencyKey = z.string().regex(/^[\x21-\x7e]{1,255}$/, 'Idempotency-Key must be 1-255 visible ASCII characters');

export const listJobsQuery = z.strictObject({
  status: z.enum(['active', 'completed', 'archived', 'failed']).optional(),
  origin: z.enum(jobOrigins).optional(),
  automationId: z.string().max(64).optional(),
  instruction: z.string().trim().min(1).max(200).optional(),
  createdAfter: z.iso.datetime({ offset: true }).optional(),
  createdBefore: z.iso.datetime({ offset: true }).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(500).optional(),
});
export type ListJobs = z.infer<typeof listJobsQuery>;

/** Where an event stream resumes: after this event id (0: from the start). */
export const lastEventId = z.coerce.number({ error: 'Last-Event-ID must be an event id' }).int('Last-Event-ID must be an event id').min(0, 'Last-Event-ID must be an event id');

export const diffQuery = z.strictObject({
  turn: z.coerce.number().int().min(1).max(1_000_000).optional(),
});

export const eventsQuery = z.strictObject({
  after: z.coerce.number().int().min(0).optional(),
});
