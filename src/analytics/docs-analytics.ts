import type { Db } from 'mongodb';
import type { ThreadDoc, TurnDoc } from '../assistant/threads';
import type { Embedder } from '../search/embedder';
import { groupQuestions, type QuestionGroup } from './question-groups';

/** What readers asked a docs domain since a date, and where the docs fell short. */
export interface AnalyticsReport {
  domain: string;
  since: string;
  volume: { questions: number; threads: number; answered: number; unanswered: number; ratedUp: number; ratedDown: number };
  /** Most asked questions, grouped by meaning. */
  topQuestions: QuestionGroup[];
  /** Questions with no passage above the relevance floor, grouped by meaning. */
  unanswered: QuestionGroup[];
  /** Answers rated down, newest first, with the reader's comment. */
  downRated: Array<{ question: string; answer: string; comment?: string; threadId: string; at: string }>;
  /** True when only the newest `maxTurns` questions were read. */
  truncated: boolean;
}

/** What analytics and the gap loop read of a turn: never its context or sources, and at most 500 characters of answer. */
export type AskedTurnFields = Pick<TurnDoc, 'userMessage' | 'answer' | 'answered' | 'feedback' | 'createdAt' | 'reader'>;

/** A turn with its thread, as analytics and the gap loop read them. */
export interface AskedTurn {
  threadId: string;
  /** Asked with a key of restricted groups: its question may quote pages only those groups read. */
  restricted: boolean;
  turn: AskedTurnFields;
}

// Enough for a busy docs site's week; beyond it the report says it read only the newest.
const maxTurns = 20_000;
const keptAnswerChars = 500;

/**
 * The domain's turns since a date, newest first: threads are read one batch at a time through a cursor, with only the
 * fields the reports use, and reading stops once `maxTurns` turns are held.
 */
export async function turnsSince(db: Db, domain: string, since: Date): Promise<{ turns: AskedTurn[]; threads: number; truncated: boolean }> {
  const cursor = db
    .collection<ThreadDoc>('threads')
    .find({ domain, updatedAt: { $gte: since } })
    .project<{ _id: string; groups?: string[]; turns: AskedTurnFields[] }>({
      groups: 1,
      'turns.userMessage': 1,
      'turns.answer': 1,
      'turns.answered': 1,
      'turns.feedback': 1,
      'turns.createdAt': 1,
      'turns.reader': 1,
    })
    .sort({ updatedAt: -1 })
    .batchSize(500);
  const turns: AskedTurn[] = [];
  let threads = 0;
  let truncated = false;
  try {
    for await (const t of cursor) {
      if (turns.length >= maxTurns) {
        truncated = true;
        break;
      }
      threads += 1;
      for (const turn of t.turns ?? []) {
        if (turn.createdAt >= since) turns.push({ threadId: t._id, restricted: (t.groups?.length ?? 0) > 0, turn: { ...turn, answer: (turn.answer ?? '').slice(0, keptAnswerChars) } });
      }
    }
  } finally {
    await cursor.close();
  }
  turns.sort((a, b) => b.turn.createdAt.getTime() - a.turn.createdAt.getTime());
  return { turns: turns.slice(0, maxTurns), threads, truncated: truncated || turns.length > maxTurns };
}

/** Whether a turn's question went unanswered; turns stored before the relevance floor existed count as answered. */
export const isUnanswered = (t: Pick<TurnDoc, 'answered'>) => t.answered === false;

export async function analyticsReport(deps: { db: Db; embedder?: () => Promise<Embedder> }, domain: string, since: Date): Promise<AnalyticsReport> {
  const { turns, threads, truncated } = await turnsSince(deps.db, domain, since);
  const embedder = await deps.embedder?.();
  const unanswered = turns.filter((t) => isUnanswered(t.turn));
  const down = turns.filter((t) => t.turn.feedback?.rating === 'down');
  return {
    domain,
    since: since.toISOString(),
    volume: {
      questions: turns.length,
      threads,
      answered: turns.length - unanswered.length,
      unanswered: unanswered.length,
      ratedUp: turns.filter((t) => t.turn.feedback?.rating === 'up').length,
      ratedDown: down.length,
    },
    topQuestions: (
      await groupQuestions(
        turns.map((t) => t.turn.userMessage),
        embedder,
      )
    ).slice(0, 20),
    unanswered: (
      await groupQuestions(
        unanswered.map((t) => t.turn.userMessage),
        embedder,
      )
    ).slice(0, 50),
    downRated: down.slice(0, 50).map(({ threadId, turn }) => ({
      question: turn.userMessage,
      answer: turn.answer.slice(0, 500),
      ...(turn.feedback?.comment ? { comment: turn.feedback.comment } : {}),
      threadId,
      at: turn.feedback!.at.toISOString(),
    })),
    truncated,
  };
}

// Readers typed the questions and comments: control characters (terminal escape sequences) never reach the terminal.
const printable = (s: string) => s.replace(/\p{Cc}/gu, ' ');

/** The report as text for a terminal. */
export function analyticsText(r: AnalyticsReport): string {
  const v = r.volume;
  const groups = (gs: QuestionGroup[]) =>
    gs.length ? gs.map((g) => `  ${String(g.count).padStart(5)}  ${printable(g.question)}${g.variants.length ? `  (also: ${printable(g.variants.slice(0, 2).join(' | '))})` : ''}`) : ['  (none)'];
  return [
    `${r.domain} since ${r.since}${r.truncated ? ' (newest questions only)' : ''}`,
    `questions ${v.questions} in ${v.threads} threads: ${v.answered} answered, ${v.unanswered} not covered by the docs; rated up ${v.ratedUp}, down ${v.ratedDown}`,
    '',
    'top questions (grouped by meaning):',
    ...groups(r.topQuestions),
    '',
    'unanswered (no passage above the relevance floor):',
    ...groups(r.unanswered),
    '',
    'rated down:',
    ...(r.downRated.length ? r.downRated.map((d) => `  ${d.at}  ${printable(d.question)}${d.comment ? `\n      comment: ${printable(d.comment)}` : ''}`) : ['  (none)']),
  ].join('\n');
}
