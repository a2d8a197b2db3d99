import { AppError } from '../errors';

const day = 86_400_000;

/** `from`/`to` (ISO dates; default the last 30 days) and `limit` of an analytics request; a bad one is `invalid_argument`. */
export function parseRange(q: URLSearchParams, now = new Date()): { from: Date; to: Date } {
  const at = (name: string, fallback: Date) => {
    const v = q.get(name);
    if (v === null) return fallback;
    const d = /^\d{4}-\d{2}-\d{2}/.test(v) ? new Date(v) : new Date(Number.NaN);
    if (Number.isNaN(d.getTime())) throw new AppError('invalid_argument', `${name}: "${v.slice(0, 40)}" must be an ISO date such as 2026-11-01 or 2026-11-01T12:00:00Z`);
    return d;
  };
  const to = at('to', now);
  const from = at('from', new Date(to.getTime() - 30 * day));
  if (from >= to) throw new AppError('invalid_argument', 'from must be before to');
  if (to.getTime() - from.getTime() > 366 * day) throw new AppError('invalid_argument', 'from..to: at most a year');
  return { from, to };
}

export function parseLimit(q: URLSearchParams, max: number, fallback: number): number {
  const v = q.get('limit');
  if (v === null) return fallback;
  if (!/^\d{1,6}$/.test(v) || Number(v) < 1 || Number(v) > max) throw new AppError('invalid_argument', `limit: must be an integer between 1 and ${max}`);
  return Number(v);
}
