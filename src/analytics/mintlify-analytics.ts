import type { Db, Filter } from 'mongodb';
import type { ThreadDoc, TurnDoc } from '../assistant/threads';
import { AppError } from '../errors';
import { feedbackByPage } from './feedback-by-page';
import { searchReport } from './search-report';

// Mintlify's analytics bodies (analytics.openapi.json of mintlify/docs, kept in test/fixtures/mintlify/) over what
// docent stores: searches, and the assistant's threads with their turns and ratings. docs/analytics.md says what maps
// to what and which of Mintlify's numbers docent has no data for.

type Range = { from: Date; to: Date };

// Threads read per request, newest first (as docent's own feedback report reads them).
const maxRatedThreads = 5_000;

/** Search terms, most searched first, a page at `offset`; `totalSearches` counts every search of the range read. */
export async function mintlifySearches(db: Db, domain: string, range: Range, limit: number, offset: number) {
  const { queries, scanned } = await searchReport(db, domain, range, Number.MAX_SAFE_INTEGER);
  const page = queries.slice(offset, offset + limit);
  return {
    searches: page.map((q) => ({
      searchQuery: q.query,
      hits: q.hits,
      ctr: q.clickThrough,
      topClickedPage: q.topClickedPage?.path ?? null,
      lastSearchedAt: q.lastSearchedAt,
      searches: q.searches,
      clicks: q.clicks,
    })),
    totalSearches: scanned,
    nextOffset: offset + limit < queries.length ? offset + limit : null,
  };
}

type ConversationCursor = { c: string; id: string; t: number };
const encodeConversationCursor = (t: Pick<ThreadDoc, '_id' | 'createdAt'>, turn: number) =>
  Buffer.from(JSON.stringify({ c: t.createdAt.toISOString(), id: t._id, t: turn } satisfies ConversationCursor)).toString('base64url');
function decodeConversationCursor(s: string): { c: Date; id: string; t: number } {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString()) as ConversationCursor;
    const c = new Date(v.c);
    if (typeof v.id !== 'string' || !Number.isInteger(v.t) || v.t < 0 || Number.isNaN(c.getTime())) throw new Error('shape');
    return { c, id: v.id, t: v.t };
  } catch {
    throw new AppError('invalid_argument', 'cursor: not a cursor this endpoint returned');
  }
}

const turnRow = (t: Pick<ThreadDoc, '_id'>, turn: TurnDoc, n: number) => ({
  id: turn.messageId ?? `${t._id}.${n + 1}`,
  threadId: t._id,
  timestamp: turn.createdAt.toISOString(),
  query: turn.userMessage,
  response: turn.answer,
  // docent never asks a clarifying question.
  responseType: 'answer' as const,
  sources: (turn.sources ?? []).map(({ title, url }) => ({ title, url })),
  resolutionStatus: turn.answered === false ? ('unanswered' as const) : ('answered' as const),
  queryCategory: null,
  pageUrl: turn.currentPath ?? null,
});

/**
 * Questions and answers as flat rows (one per turn) of conversations started in the range, newest conversation first
 * and its turns in order; the cursor names the conversation and the turn to go on from.
 */
export async function mintlifyConversations(db: Db, domain: string, range: Range, limit: number, cursor: string | null) {
  const after = cursor ? decodeConversationCursor(cursor) : undefined;
  const filter: Filter<ThreadDoc> = { domain, createdAt: { $gte: range.from, $lt: range.to } };
  // The cursor's own conversation is read again, from its turn on.
  if (after) filter.$or = [{ createdAt: { $lt: after.c } }, { createdAt: after.c, _id: { $lte: after.id } }];
  const threads = await db
    .collection<ThreadDoc>('threads')
    .find(filter)
    .project<ThreadDoc>({ 'turns.context': 0, 'turns.usage': 0, 'turns.timings': 0 })
    .sort({ createdAt: -1, _id: -1 })
    .limit(limit + 1)
    .toArray();
  const rows: Array<ReturnType<typeof turnRow>> = [];
  for (const t of threads) {
    const turns = t.turns ?? [];
    for (let n = after && t._id === after.id ? after.t : 0; n < turns.length; n++) {
      if (rows.length === limit) return { conversations: rows, nextCursor: encodeConversationCursor(t, n) };
      rows.push(turnRow(t, turns[n]!, n));
    }
  }
  return { conversations: rows, nextCursor: null };
}

/** One conversation's messages, oldest first: each turn's question, then its answer. */
export async function mintlifyThread(db: Db, domain: string, threadId: string) {
  const t = await db.collection<ThreadDoc>('threads').findOne({ _id: threadId, domain }, { projection: { 'turns.context': 0, 'turns.usage': 0 } });
  if (!t) throw new AppError('not_found', `no thread ${threadId.slice(0, 200)} in ${domain}`);
  return {
    threadId: t._id,
    createdAt: t.createdAt.toISOString(),
    messages: (t.turns ?? []).flatMap((turn, n) => [
      { id: `${t._id}.${n + 1}.question`, role: 'user' as const, content: turn.userMessage, createdAt: turn.createdAt.toISOString() },
      {
        id: turn.messageId ?? `${t._id}.${n + 1}.answer`,
        role: 'assistant' as const,
        content: turn.answer,
        createdAt: new Date(turn.createdAt.getTime() + (turn.timings?.totalMs ?? 0)).toISOString(),
      },
    ]),
  };
}

/** Questions asked in the range by what asked them; turns stored before docent recorded it count as `other`. */
export async function mintlifyCallerStats(db: Db, domain: string, range: Range) {
  const threads = await db
    .collection<ThreadDoc>('threads')
    .find({ domain, updatedAt: { $gte: range.from }, createdAt: { $lt: range.to } })
    .project<{ turns: Array<Pick<TurnDoc, 'client' | 'createdAt'>> }>({ 'turns.client': 1, 'turns.createdAt': 1 })
    .limit(maxRatedThreads)
    .toArray();
  const counts = { web: 0, api: 0, other: 0, total: 0 };
  for (const t of threads) {
    for (const turn of t.turns ?? []) {
      if (turn.createdAt < range.from || turn.createdAt >= range.to) continue;
      counts[turn.client ?? 'other'] += 1;
      counts.total += 1;
    }
  }
  return counts;
}

/** docent's ratings are of assistant answers, not yet triaged: Mintlify's `agent` source, status `pending`. */
export interface FeedbackFilter {
  source?: string;
  statuses?: string[];
}
const hasDocentFeedback = (f: FeedbackFilter) => (f.source === undefined || f.source === 'agent') && (f.statuses === undefined || f.statuses.includes('pending'));

/** Each rating given in the range, newest first, on the page the reader was on (else the first page the answer cited). */
export async function mintlifyFeedback(db: Db, domain: string, range: Range, limit: number, offset: number, filter: FeedbackFilter) {
  if (!hasDocentFeedback(filter)) return { feedback: [], nextOffset: null };
  const threads = await db
    .collection<ThreadDoc>('threads')
    .find({ domain, updatedAt: { $gte: range.from }, 'turns.feedback.at': { $gte: range.from, $lt: range.to } })
    .project<Pick<ThreadDoc, '_id'> & { turns: Array<Pick<TurnDoc, 'sources' | 'feedback' | 'currentPath'>> }>({ 'turns.sources.path': 1, 'turns.feedback': 1, 'turns.currentPath': 1 })
    .sort({ updatedAt: -1 })
    .limit(maxRatedThreads)
    .toArray();
  const rated = threads.flatMap((t) =>
    (t.turns ?? []).flatMap((turn, n) => {
      const f = turn.feedback;
      if (!f || f.at < range.from || f.at >= range.to) return [];
      const path = (turn.currentPath ?? turn.sources?.[0]?.path ?? '').replace(/^\/+/, '');
      return [
        { id: `${t._id}.${n + 1}`, path, comment: f.comment ?? null, createdAt: f.at.toISOString(), source: 'agent' as const, status: 'pending' as const, helpful: f.rating === 'up', contact: null },
      ];
    }),
  );
  rated.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || a.id.localeCompare(b.id));
  return { feedback: rated.slice(offset, offset + limit), nextOffset: offset + limit < rated.length ? offset + limit : null };
}

/** Ratings counted on each page the rated answer cited, most rated first; docent has no code-snippet feedback (`code` 0). */
export async function mintlifyFeedbackByPage(db: Db, domain: string, range: Range, limit: number, filter: FeedbackFilter) {
  if (!hasDocentFeedback(filter)) return { feedback: [], hasMore: false };
  const { pages } = await feedbackByPage(db, domain, range, limit + 1);
  return { feedback: pages.slice(0, limit).map((p) => ({ path: p.path, thumbsUp: p.up, thumbsDown: p.down, code: 0, total: p.up + p.down })), hasMore: pages.length > limit };
}
