// The two vector comparisons docent makes: dot products of unit vectors (the embedder's output) and cosines of
// vectors of any scale (the int8 copies in compact-vector.ts).

/** Dot product; for the embedder's unit vectors this is their cosine. */
export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let d = 0; d < a.length; d++) s += a[d]! * b[d]!;
  return s;
}

/** Cosine of two vectors of any scale (0 when either is all zeros). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const aa = dot(a, a);
  const bb = dot(b, b);
  return aa && bb ? dot(a, b) / Math.sqrt(aa * bb) : 0;
}
