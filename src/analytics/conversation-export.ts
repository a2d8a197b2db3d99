import type { Db, Filter } from 'mongodb';
import type { ThreadDoc, TurnDoc } from '../assistant/threads';
import { AppError } from '../errors';

/**
 * What an answer was: `answered` from the docs, or `not_in_docs` when no passage was above the relevance floor.
 * docent never asks a clarifying question, so `clarifying` (the docs platform's third kind) is never emitted.
 */
export type AnswerKind = 'answered' | 'not_in_docs' | 'clarifying';

export interface ExportedTurn {
  question: string;
  answer: string;
  kind: AnswerKind;
  status: TurnDoc['status'];
  sources: Array<{ path: string; url: string; title: string }>;
  feedback?: { rating: 'up' | 'down'; comment?: string };
  at: string;
}

export interface ExportedConversation {
  threadId: string;
  createdAt: string;
  turns: ExportedTurn[];
}

type Cursor = { c: string; id: string };
const encodeCursor = (t: ThreadDoc) => Buffer.from(JSON.stringify({ c: t.createdAt.toISOString(), id: t._id } satisfies Cursor)).toString('base64url');
function decodeCursor(s: string): { c: Date; id: string } {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString()) as Cursor;
    const c = new Date(v.c);
    if (typeof v.id !== 'string' || Number.isNaN(c.getTime())) throw new Error('shape');
    return { c, id: v.id };
  } catch {
    throw new AppError('invalid_argument', 'cursor: not a cursor this endpoint returned');
  }
}

const kindOf = (t: Pick<TurnDoc, 'answered'>): AnswerKind => (t.answered === false ? 'not_in_docs' : 'answered');

/** Conversations started in `[from, to)`, newest first, `limit` a page (each at most 100 turns); `nextCursor` reads on. */
export async function exportConversations(
  db: Db,
  domain: string,
  range: { from: Date; to: Date },
  limit: number,
  cursor?: string,
): Promise<{ conversations: ExportedConversation[]; nextCursor: string | null }> {
  const after = cursor ? decodeCursor(cursor) : undefined;
  const filter: Filter<ThreadDoc> = { domain, createdAt: { $gte: range.from, $lt: range.to } };
  if (after) filter.$or = [{ createdAt: { $lt: after.c } }, { createdAt: after.c, _id: { $lt: after.id } }];
  const threads = await db
    .collection<ThreadDoc>('threads')
    .find(filter)
    .project<ThreadDoc>({ 'turns.context': 0, 'turns.usage': 0, 'turns.timings': 0 })
    .sort({ createdAt: -1, _id: -1 })
    .limit(limit + 1)
    .toArray();
  const page = threads.slice(0, limit);
  return {
    conversations: page.map((t) => ({
      threadId: t._id,
      createdAt: t.createdAt.toISOString(),
      turns: (t.turns ?? []).map((turn) => ({
        question: turn.userMessage,
        answer: turn.answer,
        kind: kindOf(turn),
        status: turn.status,
        sources: (turn.sources ?? []).map(({ path, url, title }) => ({ path, url, title })),
        ...(turn.feedback && { feedback: { rating: turn.feedback.rating, ...(turn.feedback.comment ? { comment: turn.feedback.comment } : {}) } }),
        at: turn.createdAt.toISOString(),
      })),
    })),
    nextCursor: threads.length > limit ? encodeCursor(page[page.length - 1]!) : null,
  };
}
