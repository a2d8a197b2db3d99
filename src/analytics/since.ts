import { AppError } from '../errors';

const units: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `7d`, `24h`, `30m`, `2w` before `now`, or an ISO date; at most a year back. */
export function parseSince(value: string | undefined, now = new Date()): Date {
  const v = (value ?? '7d').trim();
  const m = /^(\d{1,4})([mhdw])$/.exec(v);
  const since = m ? new Date(now.getTime() - Number(m[1]) * units[m[2]!]!) : /^\d{4}-\d{2}-\d{2}/.test(v) ? new Date(v) : new Date(Number.NaN);
  if (Number.isNaN(since.getTime())) throw new AppError('invalid_argument', `since: "${v.slice(0, 40)}" must be a duration such as 7d, 24h, 30m or 2w, or an ISO date`);
  if (now.getTime() - since.getTime() > 366 * units.d!) throw new AppError('invalid_argument', 'since: at most a year back');
  return since;
}
