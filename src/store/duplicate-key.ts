/** MongoDB's (and FerretDB's) duplicate-key error, the signal that a unique index refused an insert. */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}
