import type { Db } from 'mongodb';
import type { JobDoc } from './job';

/** What a job's first turn is derived from while nobody has stored it (docs/decisions/2026-11-23-job-transparency.md). */
export type FirstTurnSource = Pick<JobDoc, '_id' | 'projectId' | 'model' | 'createdAt' | 'prompts' | 'firstTurnImplied'>;

const sourceFields = { projectId: 1, model: 1, createdAt: 1, prompts: 1, firstTurnImplied: 1 } as const;

/** The job, when it implies its first turn; null for a job that is gone or stored its first turn at create (older jobs). */
export async function impliedFirstTurnOf(db: Db, jobId: string): Promise<FirstTurnSource | null> {
  const job = await db.collection<JobDoc>('jobs').findOne({ _id: jobId }, { projection: sourceFields });
  return job?.firstTurnImplied ? job : null;
}

/** Turn 1 as its record is first stored: the create's prompt, at the create's time, so a derived and a stored one read the same. */
export function firstTurnOf(job: FirstTurnSource) {
  const first = job.prompts.find((p) => p.turn === 1);
  return { jobId: job._id, projectId: job.projectId, model: job.model, turn: 1, prompt: first?.prompt ?? '', at: job.createdAt, ...(first?.images?.length ? { images: first.images } : {}) };
}
