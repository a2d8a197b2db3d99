// What the gateway may do to job state: read it, admit an instruction (a job, a turn, a retry, an archive) and roll
// back its own admission when it could not deliver it. Everything a turn does after that is the worker's to record
// (src/jobs/turn-record.ts); `npm run lint` refuses the turn's record in the gateway's folders (.dependency-cruiser.cjs).
import type { JobLedger } from './ledger';

export type { ArchivedBy } from './ledger';

export type JobAdmission = Pick<
  JobLedger,
  'jobs' | 'turns' | 'diffs' | 'images' | 'events' | 'storeImages' | 'create' | 'discard' | 'claimNextTurn' | 'beginTurn' | 'reopenTurn' | 'failTurn' | 'archive'
>;
