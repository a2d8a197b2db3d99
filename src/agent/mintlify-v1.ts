import { z } from 'zod';
import type { JobDoc } from '../jobs/job';
import type { TurnDoc } from '../jobs/job-turns';
import type { CatalogModel } from '../llm/model-catalog';
import { parseInput } from '../validate';
import { prompt, refName } from './validation';

// Mintlify's deprecated v1 agent API (docs/api.md, "Mintlify compatibility"): its create body becomes docent's create,
// and a job reads back as Mintlify's session, with Mintlify's spelling (`haulted`, `haultReason`).

/** `POST /v1/agent/{projectId}/job`: Mintlify's messages, branch, asDraft and model (its `sonnet` or `opus`, or a catalog name). */
export const v1CreateJobBody = z.looseObject({
  messages: z.array(z.looseObject({ role: z.enum(['system', 'user', 'assistant'], 'must be "system", "user" or "assistant"'), content: z.string() })).max(1_000),
  branch: z.string().max(200).optional(),
  asDraft: z.boolean().optional(),
  model: z.string().max(200).optional(),
});
export type V1CreateJob = z.infer<typeof v1CreateJobBody>;

/**
 * The one instruction docent's agent takes, from Mintlify's messages: one user message is the instruction itself; a
 * longer exchange is given as a transcript; system messages follow as added instructions (Mintlify appends them to its
 * own system prompt). Empty or longer than 32 KiB is refused, as docent's create refuses it.
 */
export function v1Prompt(messages: V1CreateJob['messages']): string {
  const system = messages.filter((m) => m.role === 'system' && m.content.trim()).map((m) => m.content.trim());
  const talk = messages.filter((m) => m.role !== 'system' && m.content.trim());
  const instruction = talk.length === 1 && talk[0]!.role === 'user' ? talk[0]!.content.trim() : talk.map((m) => `${m.role === 'user' ? 'User' : 'Assistant'}: ${m.content.trim()}`).join('\n\n');
  const text = system.length ? `${instruction}\n\nAdditional instructions:\n${system.join('\n\n')}` : instruction;
  return parseInput(z.object({ messages: prompt }), { messages: text }).messages;
}

/**
 * Mintlify's model names (`sonnet`, `opus`) pick the catalog's model of that name, else the first whose name contains
 * it; a name the catalog does not know at all leaves the choice to the default, as an omitted model does.
 */
export function v1Model(name: string | undefined, catalog: readonly CatalogModel[]): string | undefined {
  if (name === undefined) return undefined;
  const wanted = name.toLowerCase();
  return (catalog.find((m) => m.name.toLowerCase() === wanted) ?? catalog.find((m) => m.name.toLowerCase().includes(wanted)))?.name;
}

/** Mintlify's `branch` names the branch the agent works on; docent's is derived from the job, so a valid name is only checked. */
export function v1Branch(branch: string | undefined): void {
  if (branch !== undefined && branch !== '') parseInput(z.object({ branch: refName }), { branch });
}

type HaultReason = 'completed' | 'github_missconfigured' | 'error' | 'processing' | 'interrupted';

/** Why the session stopped, in Mintlify's words: an archived job, or a stopped last turn, was interrupted. */
function haultReasonOf(job: JobDoc, last: TurnDoc | undefined): HaultReason {
  if (job.status === 'active') return 'processing';
  if (job.status === 'archived' || last?.status === 'stopped') return 'interrupted';
  if (job.status === 'completed') return 'completed';
  // The forge refused docent's credential: the repository's connection is what needs fixing.
  return job.error && ['unauthenticated', 'permission_denied'].includes(job.error.code) ? 'github_missconfigured' : 'error';
}

const todoStatus: Record<TurnDoc['status'], 'pending' | 'in_progress' | 'completed' | 'cancelled'> = {
  active: 'in_progress',
  completed: 'completed',
  failed: 'cancelled',
  stopped: 'cancelled',
};

const firstLine = (text: string) => (text.trim().split('\n')[0] ?? '').slice(0, 200);

/**
 * A job as Mintlify's v1 session. docent's agent keeps no to-do list: each instruction (turn) is a to-do, so a client
 * sees what was asked and how far each got. The title and the message to the user are the latest turn's pull request
 * title and summary (or its error).
 */
export function v1Session(job: JobDoc, turns: TurnDoc[], subdomain: string) {
  const last = turns.at(-1);
  const titled = [...turns].reverse().find((t) => t.title);
  const message = last?.error?.message ?? job.error?.message ?? last?.summary;
  return {
    sessionId: job._id,
    subdomain,
    branch: job.branch,
    haulted: job.status !== 'active',
    haultReason: haultReasonOf(job, last),
    ...(job.prLink ? { pullRequestLink: job.prLink } : {}),
    ...(message ? { messageToUser: message } : {}),
    todos: turns.map((t) => ({ id: `turn-${t.turn}`, content: firstLine(t.prompt), status: todoStatus[t.status], priority: 'medium' as const })),
    title: titled?.title ?? firstLine(turns[0]?.prompt ?? job.prompts[0]?.prompt ?? ''),
    createdAt: job.createdAt.toISOString(),
  };
}
export type V1Session = ReturnType<typeof v1Session>;

/** `GET /v1/agent/{projectId}/jobs`: `skip` from 0, `take` 1..100 (default 12), as Mintlify bounds them. */
export const v1ListQuery = z.looseObject({
  skip: z.coerce.number().int().min(0).default(0),
  take: z.coerce.number().int().min(1).max(100).default(12),
});
