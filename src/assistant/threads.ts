import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { AppError } from '../errors';
import type { AnswerUsage } from './events';
import type { ChatTurn, ContextItem } from './request';

/** What asked a question (Mintlify's caller types, analytics `assistant/caller-stats`). */
export type AskingClient = 'web' | 'api' | 'other';

/** One question and its answer, as stored. */
export interface TurnDoc {
  userMessage: string;
  context?: ContextItem[];
  currentPath?: string;
  sources: Array<{ id: string; path: string; url: string; title: string; score: number }>;
  answer: string;
  /** `provider:model`, `extractive` when no model is configured, `not-covered` below the relevance floor. */
  model: string;
  /** The id the answer was streamed under (absent on turns stored before issue 15). */
  messageId?: string;
  /** Whether some passage was above the relevance floor (absent on turns stored before issue 15). */
  answered?: boolean;
  /** Cosine of the question to its nearest passage, when the index has vectors. */
  relevance?: number;
  /** A reader's rating of the answer (POST …/feedback); the last rating counts. */
  feedback?: { rating: 'up' | 'down'; comment?: string; at: Date };
  status: 'completed' | 'failed' | 'aborted';
  usage?: AnswerUsage;
  timings: { retrievalMs: number; firstTokenMs?: number; totalMs: number };
  /** Who asked, as a keyed hash of the client's address (src/assistant/reader-id.ts); absent on turns stored before it. */
  reader?: string;
  /** What asked: a browser page (the request had an Origin), a server calling the API, or an MCP client; absent on turns stored before it. */
  client?: AskingClient;
  createdAt: Date;
}

export interface ThreadDoc {
  _id: string;
  domain: string;
  fp: string;
  /** The groups of the key that started it (lower case): only a key with all of them may continue it. Absent on threads stored before issue 20, which nobody continues. */
  groups?: string[];
  createdAt: Date;
  updatedAt: Date;
  turns: TurnDoc[];
}

/** Turns one thread may hold; a question to a full thread is refused, and the reader starts a new one. */
export const maxThreadTurns = 100;
/** Characters of page context stored per turn (requests may send 20 items of 10,000 for the answer itself). */
export const maxStoredContextChars = 4000;

/** The context a turn stores: items in order, values cut so that together they hold at most `maxStoredContextChars`. */
export function storedContext(context: ContextItem[]): ContextItem[] {
  let left = maxStoredContextChars;
  const kept: ContextItem[] = [];
  for (const item of context) {
    if (left <= 0) break;
    kept.push({ ...item, value: item.value.slice(0, left) });
    left -= item.value.length;
  }
  return kept;
}

/** Whether a key with `groups` may continue a thread: it must hold every group of the key that started it. */
const mayContinue = (thread: ThreadDoc, groups: readonly string[]) => thread.groups?.every((g) => groups.includes(g)) === true;

/** 144 random bits: thread ids cannot be guessed, so knowing one is the only way into a thread. */
export const newThreadId = () => `thr_${randomBytes(18).toString('base64url')}`;

export class ThreadStore {
  constructor(private readonly db: Db) {}

  private get threads() {
    return this.db.collection<ThreadDoc>('threads');
  }

  /**
   * The domain's thread with this id when the caller's `groups` may continue it, else undefined (the caller starts a
   * new thread with a new id): a key that learns another key's thread id never reads its turns. A full thread is refused.
   */
  async find(domain: string, threadId: string | undefined, groups: readonly string[]): Promise<ThreadDoc | undefined> {
    if (!threadId) return undefined;
    const found = await this.threads.findOne({ _id: threadId, domain });
    if (!found || !mayContinue(found, groups)) return undefined;
    if (found.turns.length >= maxThreadTurns) throw new AppError('failed_precondition', `thread ${threadId.slice(0, 200)} has reached ${maxThreadTurns} turns; start a new thread (send no threadId)`);
    return found;
  }

  /** A new thread's document, not yet stored: its id can be sent to the reader before `insert` has written it. */
  draft(domain: string, fp: string, groups: readonly string[]): ThreadDoc {
    const now = new Date();
    return { _id: newThreadId(), domain, fp, groups: [...new Set(groups)].sort(), createdAt: now, updatedAt: now, turns: [] };
  }

  async insert(thread: ThreadDoc): Promise<void> {
    await this.threads.insertOne(thread);
  }

  /** Appends a turn unless the thread is full (two questions raced past `open`'s check); false when it was not stored. */
  async appendTurn(threadId: string, turn: TurnDoc): Promise<boolean> {
    const full = `turns.${maxThreadTurns - 1}`;
    const r = await this.threads.updateOne({ _id: threadId, [full]: { $exists: false } }, { $push: { turns: turn }, $set: { updatedAt: new Date() } });
    return r.matchedCount === 1;
  }

  /** Sets the feedback of one turn: the one streamed as `messageId`, else the latest. */
  async setFeedback(
    domain: string,
    threadId: string,
    groups: readonly string[],
    messageId: string | undefined,
    feedback: NonNullable<TurnDoc['feedback']>,
  ): Promise<'stored' | 'no-thread' | 'no-message'> {
    const thread = await this.threads.findOne({ _id: threadId, domain });
    if (!thread || thread.turns.length === 0 || !mayContinue(thread, groups)) return 'no-thread';
    const i = messageId === undefined ? thread.turns.length - 1 : thread.turns.findIndex((t) => t.messageId === messageId);
    if (i < 0) return 'no-message';
    // Turns are only ever appended, so the position found stays the same turn.
    await this.threads.updateOne({ _id: threadId, domain }, { $set: { [`turns.${i}.feedback`]: feedback } });
    return 'stored';
  }

  get(domain: string, threadId: string): Promise<ThreadDoc | null> {
    return this.threads.findOne({ _id: threadId, domain });
  }
}

/** The earlier turns a follow-up shows the model, oldest first, at most `maxTurns`. */
export function historyOf(thread: ThreadDoc, maxTurns = 10): ChatTurn[] {
  return thread.turns
    .filter((t) => t.status === 'completed' && t.answer)
    .slice(-maxTurns)
    .flatMap((t) => [
      { role: 'user' as const, text: t.userMessage },
      { role: 'assistant' as const, text: t.answer },
    ]);
}
