import type { estypes } from '@elastic/elasticsearch';
import { stemText } from './analyze';

// Reciprocal rank fusion: a passage ranked r-th (from 0) in a list earns weight / (rrfK + r + 1).
// 60 is the constant of the original RRF paper; it keeps one list's top hit from outweighing agreement.
export const rrfK = 60;

/** A candidate list and its weight in the fusion. */
export interface RankedList {
  ids: string[];
  weight: number;
}

/**
 * Keyword evidence for the hybrid search: passages containing every content word of the question (in some field,
 * after stemming). A loose match on a few words is what the vectors judge better; an exact name is what they miss.
 */
export function strictKeywordQuery(question: string, hints: string[], filter: estypes.QueryDslQueryContainer[]): estypes.QueryDslQueryContainer {
  const stemmed = stemText(question);
  if (!stemmed) return { match_none: {} };
  return {
    bool: {
      must: [{ multi_match: { query: stemmed, fields: ['title_stem^1.5', 'description_stem^2', 'headings_stem^1.5', 'text_stem'], type: 'cross_fields', minimum_should_match: '100%' } }],
      // Exact word forms and the hints order the passages that pass; they admit none.
      should: [
        { multi_match: { query: question, fields: ['title^2', 'description^1.5', 'headings^1.5', 'text'], type: 'best_fields', tie_breaker: 0.3, boost: 0.5 } },
        ...hints.map((h) => ({ multi_match: { query: stemText(h.slice(0, 1000)), fields: ['headings_stem', 'text_stem'], boost: 0.2 } })),
      ],
      filter,
    },
  };
}

/** Nearest passages to the question's vector, among those the filters allow. */
export function vectorSearch(vector: Float32Array, size: number, filter: estypes.QueryDslQueryContainer[]): estypes.KnnSearch {
  return { field: 'embedding', query_vector: Array.from(vector), k: size, num_candidates: Math.max(100, size * 2), filter };
}

/** Fuses candidate lists by reciprocal rank; `bonus` adds to a passage's fused score (the page the user is on). */
export function fuseRanks(lists: RankedList[], bonus: (id: string) => number = () => 0): Array<{ id: string; score: number }> {
  const scores = new Map<string, number>();
  for (const { ids, weight } of lists) for (const [r, id] of ids.entries()) scores.set(id, (scores.get(id) ?? 0) + weight / (rrfK + r + 1));
  return [...scores].map(([id, s]) => ({ id, score: s + bonus(id) })).sort((a, b) => b.score - a.score);
}

/** Averages the question's vector with its hints' at lower weight, as the keyword query weighs hints lower. */
export function blendVectors(question: Float32Array, hints: Float32Array[], hintWeight = 0.4): Float32Array {
  if (hints.length === 0) return question;
  const v = Float32Array.from(question);
  for (const h of hints) for (let d = 0; d < v.length; d++) v[d]! += (hintWeight / hints.length) * h[d]!;
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  return v.map((x) => x / norm);
}
