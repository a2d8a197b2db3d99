import type { Db } from 'mongodb';

/** The most of one diff docent keeps: past it the text is cut at a line end and ends with a note. */
export const maxDiffBytes = 1024 * 1024;

/** A turn's change as git showed it when the worker pushed: the turn alone, and the branch against its base. */
export interface DiffDoc {
  _id: string;
  jobId: string;
  turn: number;
  /** The commit the branch forked from, the turn's start and its pushed commit. */
  base: string;
  startCommit: string;
  commit: string;
  turnDiff: string;
  turnTruncated: boolean;
  branchDiff: string;
  branchTruncated: boolean;
  at: Date;
}

export type TurnDiff = Omit<DiffDoc, '_id' | 'jobId' | 'turn' | 'at'>;

/** Cuts a diff at the cap, at a line end, and says so in a line no patch tool takes for content. */
export function capDiff(text: string, branch: string): { text: string; truncated: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxDiffBytes) return { text, truncated: false };
  const kept = bytes.subarray(0, maxDiffBytes).toString('utf8');
  const lineEnd = kept.lastIndexOf('\n');
  const note = `# docent: the diff was cut at ${maxDiffBytes / 1024 / 1024} MiB; the whole change is on the branch ${branch}\n`;
  return { text: `${kept.slice(0, lineEnd + 1)}${note}`, truncated: true };
}

/** Diffs by turn (`job_diffs`); written by the ledger only, at push time. */
export class JobDiffStore {
  constructor(private readonly db: Db) {}

  private get diffs() {
    return this.db.collection<DiffDoc>('job_diffs');
  }

  /** A retried push writes the same diff again. */
  async put(jobId: string, turn: number, diff: TurnDiff): Promise<void> {
    await this.diffs.replaceOne({ _id: `${jobId}:${turn}` }, { jobId, turn, ...diff, at: new Date() }, { upsert: true });
  }

  /** One turn's record, or the latest pushed turn's (whose branch diff is the whole job's) when `turn` is undefined. */
  async get(jobId: string, turn?: number): Promise<DiffDoc | null> {
    if (turn !== undefined) return this.diffs.findOne({ _id: `${jobId}:${turn}` });
    return (await this.diffs.find({ jobId }).sort({ turn: -1 }).limit(1).toArray())[0] ?? null;
  }
}

export async function ensureDiffIndexes(db: Db): Promise<void> {
  await db.collection('job_diffs').createIndex({ jobId: 1, turn: -1 });
}
