// What REST and Connect accept for an automation: unknown fields, a cron Temporal would not read and a time zone
// that does not exist are the caller's 400.
import { z } from 'zod';
import { modelName, prompt, refName } from '../agent/validation';
import type { AutomationSpec } from './automation';
import { cronReadable } from './schedule-interval';

/** At most this many read-only context repositories per automation (issue 35). */
export const maxContextRepositories = 10;

const repo = z.string().regex(/^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/, 'must be owner/name');

/**
 * A cron of 5 fields (minute hour day-of-month month day-of-week), or 6 with a fixed second first. Temporal also reads
 * a year and second ranges; docent takes neither, so a schedule runs at most once a minute, and only in the years
 * ahead. Temporal parses the values when the schedule is made (src/automations/automation-schedule.ts turns its
 * refusal into a 400); this refuses the forms it would read otherwise (a `TZ=` prefix, macros, comments), so the time
 * zone is only ever `timeZone`. How often it may run is the service's to check (src/automations/schedule-interval.ts).
 */
export const cronExpression = z
  .string()
  .max(200)
  .refine(
    (c) => {
      const fields = c.trim().split(/ +/);
      if (!/^[0-9A-Za-z*?/,-]+( +[0-9A-Za-z*?/,-]+)*$/.test(c.trim())) return false;
      if (fields.length === 6 && !(/^\d{1,2}$/.test(fields[0]!) && Number(fields[0]) < 60)) return false;
      return (fields.length === 5 || fields.length === 6) && cronReadable(c.trim());
    },
    { message: 'must be a cron expression of 5 fields (minute hour day-of-month month day-of-week), or 6 with a fixed second (0-59) first' },
  )
  .transform((c) => c.trim());

/** An IANA time zone the runtime knows (Temporal reads the same database). */
export const timeZone = z
  .string()
  .max(64)
  .refine(
    (tz) => {
      try {
        new Intl.DateTimeFormat('en', { timeZone: tz });
        return true;
      } catch {
        return false;
      }
    },
    { message: 'must be an IANA time zone such as Europe/Berlin or UTC' },
  );

export const automationTrigger = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('schedule'), cron: cronExpression, timeZone: timeZone.default('UTC') }),
  z.strictObject({ type: z.literal('push'), repo: repo.optional(), branch: refName }),
  z.strictObject({ type: z.literal('merged_pull_request'), repo }),
  z.strictObject({ type: z.literal('issue'), label: z.string().min(1).max(50).optional() }),
  // `includeRestricted`: questions asked with keys of restricted groups join the job's prompt and pull request too.
  z.strictObject({ type: z.literal('unanswered_questions'), threshold: z.number().int().min(1).max(10_000), includeRestricted: z.boolean().optional() }),
  z.strictObject({ type: z.literal('manual') }),
]);

const fields = {
  name: z.string().trim().min(1, 'must not be empty').max(200),
  trigger: automationTrigger,
  instruction: prompt,
  output: z.enum(['pull_request', 'update_pull_request']),
  contextRepositories: z
    .array(z.strictObject({ repo, ref: refName.optional() }))
    .max(maxContextRepositories, `at most ${maxContextRepositories} context repositories`)
    .optional(),
  requirePlanApproval: z.boolean().optional(),
  model: modelName.optional(),
};

export const createAutomationBody = z.strictObject(fields) satisfies z.ZodType<AutomationSpec>;
/** A PATCH sets the fields it names; a trigger is replaced whole. */
export const updateAutomationBody = z.strictObject(fields).partial();
export type UpdateAutomation = z.infer<typeof updateAutomationBody>;

export const listRunsQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(100).default(50) });
