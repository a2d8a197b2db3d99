// Maximal marginal relevance (Carbonell and Goldstein, 1998) over the fused candidates: docs repeat themselves (the same
// generated option section on many command pages), and five near-copies of one passage leave no room for the answer.
import { cosine } from './vector-math';

/** Weight of relevance against redundancy; chosen on the tuning sets (0.6–0.75 scored alike there; docs/decisions/2026-11-23-retrieval-reranking-mmr.md). */
export const mmrLambda = 0.7;
/** Only the best candidates are re-ordered: the top 5 is what is read, and each step compares with those taken. */
export const mmrDepth = 20;

/**
 * Re-orders the best `depth` candidates (sorted by score, best first) greedily: each next one maximises
 * `lambda × score / best score − (1 − lambda) × its highest cosine to one already taken`. The rest keep their order.
 * Candidates without a vector count as redundant with nothing.
 */
export function diverseOrder<T extends { id: string; score: number }>(ranked: T[], vectorOf: (id: string) => ArrayLike<number> | undefined, lambda = mmrLambda, depth = mmrDepth): T[] {
  const head = ranked.slice(0, depth);
  const best = head[0]?.score || 1;
  const taken: T[] = [];
  // Highest cosine of each remaining candidate to those taken so far, updated as each one is taken.
  const redundancy = head.map(() => 0);
  const left = head.map((_, i) => i);
  while (left.length) {
    let pick = 0;
    let pickScore = -Infinity;
    for (const [j, i] of left.entries()) {
      const s = (lambda * head[i]!.score) / best - (1 - lambda) * redundancy[i]!;
      if (s > pickScore) [pick, pickScore] = [j, s];
    }
    const [i] = left.splice(pick, 1);
    const chosen = head[i!]!;
    taken.push(chosen);
    const v = vectorOf(chosen.id);
    if (!v) continue;
    for (const k of left) {
      const w = vectorOf(head[k]!.id);
      if (w) redundancy[k] = Math.max(redundancy[k]!, cosine(v, w));
    }
  }
  return [...taken, ...ranked.slice(depth)];
}
