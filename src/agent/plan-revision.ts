import { AppError } from '../errors';

/**
 * The plan revision an approval is for: the one the client read, which must still be the current one (409 `aborted`
 * when another came since). A client that names none (one from before `revision`) approves only a plan that was never
 * revised: once there is a second revision, "the current one" may be a plan that client never saw.
 */
export function approvedRevision(current: number, read: number | undefined): number {
  if (read === undefined) {
    if (current === 1) return current;
    throw new AppError('invalid_argument', `revision: the plan has been revised and is at revision ${current}; read it and approve it with the revision you read ("revision": ${current})`);
  }
  if (read !== current) throw new AppError('aborted', `the plan is at revision ${current}, not ${read}: another revision came since it was read; read the job again and approve the revision you mean`);
  return read;
}
