import type { JobDoc } from '../../src/jobs/job';

/** A job as a create stores it, on its first turn and still active; tests override what they are about. */
export function activeJobDoc(id: string, overrides: Partial<JobDoc> & { at?: Date } = {}): JobDoc {
  const { at = new Date(), ...rest } = overrides;
  return {
    _id: id,
    projectId: 'widgets',
    status: 'active',
    source: { repository: 'acme/widgets', ref: 'main' },
    model: 'm1',
    branch: `docent/${id}`,
    prLink: null,
    createdAt: at,
    updatedAt: at,
    archivedAt: null,
    turn: 1,
    prompts: [{ turn: 1, prompt: 'fix the typo', at }],
    asDraft: false,
    ...rest,
  };
}
