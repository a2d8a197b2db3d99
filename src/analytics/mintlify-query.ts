import { AppError } from '../errors';

// Query parameters of Mintlify's analytics paths (`/v1/analytics/{projectId}/…`): `dateFrom`/`dateTo` (`dateTo`
// exclusive) and numbers Mintlify accepts, clamped to docent's bounds rather than refused, each clamp named in the
// `X-Docent-Clamped` header.

const day = 86_400_000;
/** The longest range docent reads at once (docent's own analytics refuse more). */
const maxRangeMs = 366 * day;

/** Clamps applied to a request: `name=value` each, for the X-Docent-Clamped header. */
export class Clamps {
  private readonly applied: string[] = [];
  note(name: string, value: string | number): void {
    this.applied.push(`${name}=${value}`);
  }
  headers(): Record<string, string> {
    return this.applied.length ? { 'x-docent-clamped': this.applied.join(', ') } : {};
  }
}

const dateOf = (name: string, v: string) => {
  const d = /^\d{4}-\d{2}-\d{2}/.test(v) ? new Date(v) : new Date(Number.NaN);
  if (Number.isNaN(d.getTime())) throw new AppError('invalid_argument', `${name}: "${v.slice(0, 40)}" must be a date in ISO 8601 or YYYY-MM-DD format`);
  return d;
};

/**
 * `[dateFrom, dateTo)`: default the 30 days before now; equal dates are an empty range (Mintlify's own example), a
 * `dateFrom` after `dateTo` is `400`. A range longer than a year keeps its end and starts a year before it.
 */
export function mintlifyRange(q: URLSearchParams, clamps: Clamps, now = new Date()): { from: Date; to: Date } {
  const toParam = q.get('dateTo');
  const fromParam = q.get('dateFrom');
  const to = toParam === null ? now : dateOf('dateTo', toParam);
  let from = fromParam === null ? new Date(to.getTime() - 30 * day) : dateOf('dateFrom', fromParam);
  if (from > to) throw new AppError('invalid_argument', 'dateFrom must not be after dateTo');
  if (to.getTime() - from.getTime() > maxRangeMs) {
    from = new Date(to.getTime() - maxRangeMs);
    clamps.note('dateFrom', from.toISOString());
  }
  return { from, to };
}

/**
 * A count parameter: Mintlify's bounds decide what is refused (`400`), docent's `max` what is read; a fraction is
 * rounded down, and a value above docent's bound is lowered to it, both named in the header.
 */
export function mintlifyCount(q: URLSearchParams, name: string, bounds: { min: number; max: number; fallback: number; docentMax?: number }, clamps: Clamps): number {
  const raw = q.get(name);
  if (raw === null) return Math.min(bounds.fallback, bounds.docentMax ?? bounds.fallback);
  const n = raw.trim() === '' ? Number.NaN : Number(raw);
  if (!Number.isFinite(n) || n < bounds.min || n > bounds.max) throw new AppError('invalid_argument', `${name}: must be a number between ${bounds.min} and ${bounds.max}`);
  let v = Math.floor(n);
  if (v < bounds.min) v = bounds.min;
  if (bounds.docentMax !== undefined && v > bounds.docentMax) v = bounds.docentMax;
  if (v !== n) clamps.note(name, v);
  return v;
}

/** An offset cursor of a list docent pages by position (`nextCursor` of searches and feedback). */
export const offsetCursor = {
  encode: (offset: number) => Buffer.from(`o:${offset}`).toString('base64url'),
  decode(cursor: string | null): number {
    if (cursor === null || cursor === '') return 0;
    const m = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString());
    if (!m) throw new AppError('invalid_argument', 'cursor: not a cursor this endpoint returned');
    return Number(m[1]);
  },
};
