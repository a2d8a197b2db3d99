import { z } from 'zod';

// The fields of GitHub's webhook payloads that docent reads (docs.github.com/webhooks/webhook-events-and-payloads).
// The body is signed by GitHub, yet read as data: only these fields, each checked, are used.

const user = z.object({ login: z.string().max(100), type: z.string().max(40).optional() });
const repository = z.object({
  full_name: z
    .string()
    .max(300)
    .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/),
});
const comment = z.object({
  id: z.number().int().positive(),
  body: z.string().nullable(),
  user,
  author_association: z.string().max(40),
});
const pullHead = z.object({ ref: z.string().max(300), sha: z.string().max(64).optional(), repo: repository.nullable() });

/** An issue's text: GitHub allows a 256-character title and a 65536-character body. */
const issueText = { title: z.string().max(1024).optional(), body: z.string().max(262_144).nullable().optional() };

export const issueCommentEvent = z.object({
  action: z.string().max(40),
  issue: z.object({
    number: z.number().int().positive(),
    html_url: z.string().max(2000),
    ...issueText,
    // Present only when the issue is a pull request.
    pull_request: z.object({ html_url: z.string().max(2000).optional() }).optional(),
  }),
  comment,
  repository,
});

export const reviewCommentEvent = z.object({
  action: z.string().max(40),
  comment: comment.extend({
    path: z.string().max(4096),
    line: z.number().int().nullable().optional(),
    original_line: z.number().int().nullable().optional(),
    diff_hunk: z.string(),
  }),
  pull_request: z.object({ number: z.number().int().positive(), html_url: z.string().max(2000) }),
  repository,
});

export const pullRequestEvent = z.object({
  action: z.string().max(40),
  pull_request: z.object({
    number: z.number().int().positive(),
    merged: z.boolean().nullable().optional(),
    head: pullHead,
    // Read when a merged pull request starts automations (src/github/automation-triggers.ts).
    base: z.object({ ref: z.string().max(300) }).optional(),
    merge_commit_sha: z.string().max(64).nullable().optional(),
    html_url: z.string().max(2000).optional(),
    ...issueText,
  }),
  repository,
});

/** `issues`: labeled, assigned (and the rest, ignored); the issue with its title and body, the label or assignee. */
export const issuesEvent = z.object({
  action: z.string().max(40),
  issue: z.object({ number: z.number().int().positive(), html_url: z.string().max(2000), pull_request: z.unknown().optional(), ...issueText }),
  label: z.object({ name: z.string().max(100) }).optional(),
  /** GitLab: every label one update added (GitHub sends one delivery per label, in `label`). */
  added_labels: z.array(z.string().max(100)).max(100).optional(),
  assignee: user.nullable().optional(),
  sender: user.optional(),
  repository,
});

export const pushEvent = z.object({
  ref: z.string().max(300),
  after: z.string().max(64).optional(),
  deleted: z.boolean().optional(),
  // GitHub lists at most 2048 commits; the instruction shows the last few (src/automations/event-instruction.ts).
  commits: z
    .array(z.object({ id: z.string().max(64), message: z.string().max(65_536) }))
    .max(2048)
    .optional(),
  repository,
});

/** Any event: the repository it concerns, when it names one. */
export const anyEvent = z.object({ action: z.string().max(40).optional(), repository: repository.optional() });

/** Only the repository a delivery names: read from a body not yet verified, to pick the secrets to verify it with. */
export const unverifiedRepository = z.object({ repository: repository });

const commentSubject = z.object({ action: z.string().max(40), comment: z.object({ id: z.number().int().positive() }), repository });

/**
 * What a delivery is about, the same whatever its X-GitHub-Delivery: event, action, repository and the comment, or the
 * pull request and its head, or the pushed commit. Undefined for events docent does not act on.
 */
export function deliverySubject(event: string, payload: unknown): string | undefined {
  const repo = (r: { full_name: string }) => r.full_name.toLowerCase();
  if (event === 'issue_comment' || event === 'pull_request_review_comment') {
    const p = commentSubject.safeParse(payload);
    if (p.success) return `${event}:${p.data.action}:${repo(p.data.repository)}:comment ${p.data.comment.id}`;
  }
  if (event === 'pull_request') {
    const p = pullRequestEvent.safeParse(payload);
    if (p.success) return `${event}:${p.data.action}:${repo(p.data.repository)}:pull ${p.data.pull_request.number}:head ${p.data.pull_request.head.sha ?? ''}`;
  }
  if (event === 'issues') {
    const p = issuesEvent.safeParse(payload);
    if (p.success) return `${event}:${p.data.action}:${repo(p.data.repository)}:issue ${p.data.issue.number}:${p.data.added_labels?.join(',') ?? p.data.label?.name ?? p.data.assignee?.login ?? ''}`;
  }
  if (event === 'push') {
    const p = pushEvent.safeParse(payload);
    if (p.success && p.data.after) return `${event}:${repo(p.data.repository)}:${p.data.ref}:${p.data.after}`;
  }
  return undefined;
}
