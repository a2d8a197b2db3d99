// What the intake (src/github/webhook-service.ts) decides about a verified delivery before it answers: a payload docent
// cannot read is refused, one that asks nothing of docent is settled at once, and the rest goes to the durable step
// (src/github/delivery-handler.ts). Nothing here reads the database or the forge: it runs in milliseconds.
import type { z } from 'zod';
import { AppError } from '../errors';
import type { DeliveryHandling } from './deliveries';
import { isDocentAnswer, mentions } from './mentions';
import { issueCommentEvent, issuesEvent, pullRequestEvent, pushEvent, reviewCommentEvent } from './payloads';

/** The events a delivery may cause work for, each with the fields docent reads. */
export const handledEvents = {
  issue_comment: issueCommentEvent,
  issues: issuesEvent,
  pull_request_review_comment: reviewCommentEvent,
  pull_request: pullRequestEvent,
  push: pushEvent,
} satisfies Record<string, z.ZodType>;

export type HandledEvent = keyof typeof handledEvents;
export type EventPayload<E extends HandledEvent> = z.infer<(typeof handledEvents)[E]>;

export const ignored = (reason: string, extra: Partial<DeliveryHandling> = {}): DeliveryHandling => ({ ...extra, outcome: 'ignored', reason });

/** What screening found: work for the durable step (the payload as read), or the delivery's outcome now. */
export type Screened = { work: true; event: HandledEvent; payload: unknown } | { work: false; handled: DeliveryHandling };

export interface ScreenSettings {
  /** The handle a comment mentions to steer docent (DOCENT_GITHUB_MENTION). */
  mention: string;
}

/** A payload missing a field docent reads is refused: GitHub would not send it, so someone else built it. */
export function parsePayload<T>(schema: z.ZodType<T>, payload: unknown): T {
  const parsed = schema.safeParse(payload);
  if (!parsed.success) throw new AppError('invalid_argument', `the payload lacks a field docent reads (${parsed.error.issues[0]?.path.join('.') ?? '?'})`);
  return parsed.data;
}

const isHandled = (event: string): event is HandledEvent => Object.hasOwn(handledEvents, event);

/** Reads a verified delivery's payload (400 when it lacks a field docent reads) and settles what asks nothing of docent. */
export function screen(event: string, payload: unknown, s: ScreenSettings): Screened {
  if (event === 'ping') return { work: false, handled: ignored('ping: the webhook is set up') };
  if (!isHandled(event)) return { work: false, handled: ignored(`event ${event} is not handled`) };
  const parsed = parsePayload<unknown>(handledEvents[event], payload);
  const settled = settledAtOnce(event, parsed as never, s);
  return settled ? { work: false, handled: settled } : { work: true, event, payload: parsed };
}

function settledAtOnce<E extends HandledEvent>(event: E, p: EventPayload<E>, s: ScreenSettings): DeliveryHandling | null {
  switch (event) {
    case 'issue_comment': {
      const c = p as EventPayload<'issue_comment'>;
      return commentNeedsNothing(c.action, 'comment', c.comment, c.issue.number, s);
    }
    case 'pull_request_review_comment': {
      const c = p as EventPayload<'pull_request_review_comment'>;
      return commentNeedsNothing(c.action, 'review comment', c.comment, c.pull_request.number, s);
    }
    case 'pull_request': {
      const r = p as EventPayload<'pull_request'>;
      return r.action === 'closed' ? null : ignored(`pull request ${r.action}, not closed`, { pullNumber: r.pull_request.number });
    }
    case 'issues':
      return issueNeedsNothing(p as EventPayload<'issues'>, s);
    default:
      return null;
  }
}

/** A comment steers or starts a job only when it is new, a person's, and mentions the handle. */
function commentNeedsNothing(action: string, what: string, comment: { body: string | null; user: { login: string; type?: string } }, number: number, s: ScreenSettings): DeliveryHandling | null {
  const about = { pullNumber: number, author: comment.user.login };
  if (action !== 'created') return ignored(`${what} ${action}, not created`, about);
  const body = comment.body ?? '';
  if (isDocentAnswer(body)) return ignored("docent's own answer", about);
  if (comment.user.type === 'Bot') return ignored('comment by a bot', about);
  if (!mentions(body, s.mention)) return ignored(`no mention of @${s.mention}`, about);
  return null;
}

/** An issue starts runs only when labeled, or assigned to docent, by a person. */
function issueNeedsNothing(p: EventPayload<'issues'>, s: ScreenSettings): DeliveryHandling | null {
  const about = { pullNumber: p.issue.number };
  if (p.issue.pull_request) return ignored('a pull request, not an issue', about);
  if (p.action !== 'labeled' && p.action !== 'assigned') return ignored(`issue ${p.action}: only labeled and assigned start runs`, about);
  if (p.sender?.type === 'Bot') return ignored('done by a bot', about);
  const handle = s.mention.toLowerCase();
  const assignee = (p.assignee?.login ?? '').toLowerCase();
  if (p.action === 'assigned' && assignee !== handle && assignee !== `${handle}[bot]`) return ignored(`assigned to ${p.assignee?.login ?? 'nobody'}, not to ${s.mention}`, about);
  return null;
}
