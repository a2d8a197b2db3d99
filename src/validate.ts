import type { z } from 'zod';
import { AppError } from './errors';

/** Parses input with a schema; a misfit is a 400 naming the first offending field, e.g. `prompt: must not be empty`. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const message = r.error.issues
    .slice(0, 3)
    .map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message))
    .join('; ');
  throw new AppError('invalid_argument', message);
}
