import type { Db, UpdateResult } from 'mongodb';
import type { ImageRef } from './job-images';
import type { CheckResult, PullRequestReply } from '../../workflows/agent-job-contract';
import { isDuplicateKey } from '../store/duplicate-key';
import { firstTurnOf, impliedFirstTurnOf, type FirstTurnSource } from './first-turn';

export type TurnStatus = 'active' | 'completed' | 'failed' | 'stopped';

export interface FileStat {
  path: string;
  additions: number;
  deletions: number;
}

export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  /** Absent when the model has no price in DOCENT_MODEL_PRICES. */
  costUsd?: number;
}

/** One instruction of a job and what came of it (docs/agent-jobs.md, "Turns, usage and cost"). */
export interface TurnDoc {
  _id: string;
  jobId: string;
  projectId: string;
  model: string;
  turn: number;
  prompt: string;
  /** The instruction's images, by reference; a retry sends them again. */
  images?: ImageRef[];
  status: TurnStatus;
  startedAt: Date;
  finishedAt: Date | null;
  filesChanged: FileStat[];
  usage: TurnUsage;
  checks?: CheckResult[];
  error?: { code: string; message: string };
  prLink: string | null;
  /** The durable steps a retry resumes after: the commit the turn started from and the one it pushed. */
  startCommit?: string;
  commit?: string;
  title?: string;
  summary?: string;
  /** Set by the checks result, for the pull request's draft flag on a retry. */
  checksPassed?: boolean | null;
  /** 1, then one more for each retry. */
  attempt: number;
  /** The pull request whose comment gave the instruction: a retry answers there too. */
  reply?: PullRequestReply;
  /** The repository's AGENTS.md the agent read as project instructions (activities/agent-job/project-instructions.ts). */
  projectInstructions?: ProjectInstructionsRecord;
}

/** Which of the repository's AGENTS.md files the turn's agent was given and its size, or why the one found was not read. */
export type ProjectInstructionsRecord = { path: string; bytes: number; truncated: boolean } | { path: string; refused: string };

export const turnId = (jobId: string, turn: number) => `${jobId}:${turn}`;

export function turnToJson(t: TurnDoc) {
  return {
    turn: t.turn,
    prompt: t.prompt,
    model: t.model,
    status: t.status,
    startedAt: t.startedAt.toISOString(),
    finishedAt: t.finishedAt?.toISOString() ?? null,
    filesChanged: t.filesChanged ?? [],
    usage: t.usage ?? { inputTokens: 0, outputTokens: 0 },
    checks: t.checks ?? [],
    error: t.error ?? null,
    prLink: t.prLink ?? null,
    projectInstructions: t.projectInstructions ?? null,
  };
}

export async function ensureTurnIndexes(db: Db): Promise<void> {
  await db.collection('job_turns').createIndex({ jobId: 1, turn: 1 });
  await db.collection('job_turns').createIndex({ projectId: 1, model: 1 });
}

type NewTurn = { jobId: string; projectId: string; model: string; turn: number; prompt: string; at: Date } & NextTurnExtras;
/** What a follow-up may bring beside its prompt: images shown to the model, the pull request whose comment gave it. */
export type NextTurnExtras = { images?: ImageRef[]; reply?: PullRequestReply };

/** An accepted instruction's record before anything has happened to it. */
function newTurn(t: NewTurn): TurnDoc {
  return {
    _id: turnId(t.jobId, t.turn),
    jobId: t.jobId,
    projectId: t.projectId,
    model: t.model,
    turn: t.turn,
    prompt: t.prompt,
    ...(t.images?.length ? { images: t.images } : {}),
    status: 'active',
    startedAt: t.at,
    finishedAt: null,
    filesChanged: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    prLink: null,
    attempt: 1,
    ...(t.reply ? { reply: t.reply } : {}),
  };
}

/**
 * A job's turns. Turn 1 of a job created with `firstTurnImplied` reads as derived from the job until the first write
 * to it stores it (src/jobs/first-turn.ts), so a create writes one document.
 */
export class TurnStore {
  constructor(private readonly db: Db) {}

  private get turns() {
    return this.db.collection<TurnDoc>('job_turns');
  }

  /** Records an accepted instruction; a repeated call for the same turn changes nothing. */
  async begin(t: NewTurn): Promise<void> {
    await this.claim(t);
  }

  /** Inserts the turn's record; false when it exists, so of racing follow-ups exactly one gets each turn number. */
  async claim(t: NewTurn): Promise<boolean> {
    try {
      await this.turns.insertOne(newTurn(t));
      return true;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return false;
    }
  }

  private async impliedFirst(jobId: string): Promise<TurnDoc | null> {
    const job = await impliedFirstTurnOf(this.db, jobId);
    return job ? newTurn(firstTurnOf(job)) : null;
  }

  /** Runs a write to one turn; one that found no record of an implied turn 1 stores that record and runs again. */
  private async write(jobId: string, turn: number, update: () => Promise<UpdateResult>): Promise<UpdateResult> {
    const r = await update();
    if (r.matchedCount > 0 || turn !== 1) return r;
    const implied = await impliedFirstTurnOf(this.db, jobId);
    if (!implied) return r;
    await this.claim(firstTurnOf(implied));
    return update();
  }

  async get(jobId: string, turn: number): Promise<TurnDoc | null> {
    return (await this.turns.findOne({ _id: turnId(jobId, turn) })) ?? (turn === 1 ? this.impliedFirst(jobId) : null);
  }

  /** The job's turns, oldest first; `job`, when the caller has read it, saves a read for an implied turn 1. */
  async list(jobId: string, job?: FirstTurnSource): Promise<TurnDoc[]> {
    const stored = await this.turns.find({ jobId }).sort({ turn: 1 }).toArray();
    if (stored[0]?.turn === 1) return stored;
    const first = job ? (job.firstTurnImplied ? newTurn(firstTurnOf(job)) : null) : await this.impliedFirst(jobId);
    return first ? [first, ...stored] : stored;
  }

  /** Adds what one model call used; every attempt counts, since every attempt was paid for. */
  async addUsage(jobId: string, turn: number, usage: TurnUsage): Promise<void> {
    const inc: Record<string, number> = { 'usage.inputTokens': usage.inputTokens, 'usage.outputTokens': usage.outputTokens };
    if (usage.costUsd !== undefined) inc['usage.costUsd'] = usage.costUsd;
    await this.write(jobId, turn, () => this.turns.updateOne({ _id: turnId(jobId, turn) }, { $inc: inc }));
  }

  /** What every turn of the job has cost so far, in USD (turns without a price count 0). */
  async jobCostUsd(jobId: string): Promise<number> {
    const turns = await this.turns.find({ jobId }, { projection: { usage: 1 } }).toArray();
    return turns.reduce((sum, t) => sum + (t.usage.costUsd ?? 0), 0);
  }

  async update(jobId: string, turn: number, set: Partial<TurnDoc>): Promise<void> {
    await this.write(jobId, turn, () => this.turns.updateOne({ _id: turnId(jobId, turn) }, { $set: set }));
  }

  /** Ends the turn once: only an active turn moves, so a late or repeated write never changes a finished one. */
  async finish(jobId: string, turn: number, set: Partial<TurnDoc> & { status: TurnStatus }): Promise<boolean> {
    const r = await this.write(jobId, turn, () => this.turns.updateOne({ _id: turnId(jobId, turn), status: 'active' }, { $set: { ...set, finishedAt: new Date() } }));
    return r.modifiedCount === 1;
  }

  /** Makes a failed turn active again for a retry; null when it is not the failed turn it should be. */
  async reopen(jobId: string, turn: number): Promise<TurnDoc | null> {
    return this.turns.findOneAndUpdate(
      { _id: turnId(jobId, turn), status: { $in: ['failed', 'stopped'] } },
      { $set: { status: 'active', finishedAt: null }, $unset: { error: '' }, $inc: { attempt: 1 } },
      { returnDocument: 'after' },
    );
  }
}
