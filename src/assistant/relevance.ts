import type { Relevance } from '../search/docs-index';

/**
 * Whether the docs answer a question at all: the nearest passage is close enough in meaning (cosine at or above the
 * floor), or some passage contains every content word of the question (an exact name the vectors do not know).
 * Without vectors only the second holds. Chosen by measurement: docs/decisions/2026-11-23-relevance-floor.md.
 */
export function isAnswerable(r: Relevance, floor: number): boolean {
  if (r.cosine === undefined) return r.keywordMatch;
  return r.cosine >= floor || r.keywordMatch;
}

/** What the assistant says when the docs do not cover a question; it cites nothing. */
export const notCoveredAnswer = 'The documentation does not cover this question, so I cannot answer it from the docs. Try other words, or ask about what the docs describe.';
