import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import type { AnswerUsage } from './events';
import type { ChatTurn, ContextItem } from './request';

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
  createdAt: Date;
}

export interface ThreadDoc {
  _id: string;
  domain: string;
  fp: string;
  createdAt: Date;
  updatedAt: Date;
  turns: TurnDoc[];
}

/** 144 random bits: thread ids cannot be guessed, so knowing one is the only way into a thread. */
export const newThreadId = () => `thr_${randomBytes(18).toString('base64url')}`;

export class ThreadStore {
  constructor(private readonly db: Db) {}

  private get threads() {
    return this.db.collection<ThreadDoc>('threads');
  }

  /** The domain's thread with this id, or a new thread (with a new id) when there is none. */
  async open(domain: string, fp: string, threadId: string | undefined): Promise<{ thread: ThreadDoc; isNew: boolean }> {
    if (threadId) {
      const found = await this.threads.findOne({ _id: threadId, domain });
      if (found) return { thread: found, isNew: false };
    }
    const now = new Date();
    const thread: ThreadDoc = { _id: newThreadId(), domain, fp, createdAt: now, updatedAt: now, turns: [] };
    await this.threads.insertOne(thread);
    return { thread, isNew: true };
  }

  async appendTurn(threadId: string, turn: TurnDoc): Promise<void> {
    await this.threads.updateOne({ _id: threadId }, { $push: { turns: turn }, $set: { updatedAt: new Date() } });
  }

  /** Sets the feedback of one turn: the one streamed as `messageId`, else the latest. */
  async setFeedback(domain: string, threadId: string, messageId: string | undefined, feedback: NonNullable<TurnDoc['feedback']>): Promise<'stored' | 'no-thread' | 'no-message'> {
    const thread = await this.threads.findOne({ _id: threadId, domain });
    if (!thread || thread.turns.length === 0) return 'no-thread';
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
