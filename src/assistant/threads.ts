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
  /** `provider:model`, or `extractive` when no model is configured. */
  model: string;
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
