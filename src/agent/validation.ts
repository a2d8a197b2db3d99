import { z } from 'zod';

export const maxPromptChars = 32 * 1024;

/** An instruction: at least one character after trimming, at most 32 KiB. */
export const prompt = z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(maxPromptChars, `must be at most ${maxPromptChars} characters`);

// What git accepts as a branch name, minus the odd corners no one needs here.
const refName = z
  .string()
  .max(200)
  .regex(/^(?!\/|.*\/\/|.*\.\.|.*@\{|.*\.lock$|.*\/$)[A-Za-z0-9._/-]+$/, 'must be a valid branch name');

export const createJobBody = z.strictObject({
  prompt,
  branch: refName.optional(),
  model: z
    .string()
    .max(200)
    .regex(/^[A-Za-z0-9._:/@-]+$/, 'must be a model id')
    .optional(),
  asDraft: z.boolean().optional(),
});
export type CreateJob = z.infer<typeof createJobBody>;

export const sendMessageBody = z.strictObject({ prompt });

export const idempotencyKey = z.string().regex(/^[\x21-\x7e]{1,255}$/, 'Idempotency-Key must be 1-255 visible ASCII characters');

export const listJobsQuery = z.strictObject({
  status: z.enum(['active', 'completed', 'archived', 'failed']).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(500).optional(),
});
export type ListJobs = z.infer<typeof listJobsQuery>;

/** Where an event stream resumes: after this event id (0: from the start). */
export const lastEventId = z.coerce.number({ error: 'Last-Event-ID must be an event id' }).int('Last-Event-ID must be an event id').min(0, 'Last-Event-ID must be an event id');

export const eventsQuery = z.strictObject({
  after: z.coerce.number().int().min(0).optional(),
});
