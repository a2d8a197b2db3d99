import type { Embedder } from '../search/embedder';
import { dot } from '../search/vector-math';

/** Questions that mean the same thing, most asked wording first. */
export interface QuestionGroup {
  /** The most asked wording of the group. */
  question: string;
  count: number;
  /** Other wordings in the group (up to 5). */
  variants: string[];
}

/** Questions at least this close (cosine of their MiniLM vectors) ask the same thing; see docs/decisions/2026-11-23-analytics-feedback-and-gap-loop.md. */
export const sameMeaning = 0.75;

const normalize = (q: string) =>
  q
    .toLowerCase()
    .replace(/[\s?!.,;:]+/g, ' ')
    .trim();

/**
 * Groups questions by meaning: each distinct wording (most asked first) joins the first group whose leading wording
 * is at least `sameMeaning` close, or starts a group. Without a model, identical wordings (case and punctuation
 * aside) group. Groups are sorted by how often they were asked.
 */
export async function groupQuestions(questions: string[], embedder?: Embedder): Promise<QuestionGroup[]> {
  const byWording = new Map<string, { text: string; count: number }>();
  for (const q of questions) {
    const key = normalize(q);
    if (!key) continue;
    const w = byWording.get(key) ?? { text: q.trim(), count: 0 };
    w.count++;
    byWording.set(key, w);
  }
  const wordings = [...byWording.values()].sort((a, b) => b.count - a.count || a.text.localeCompare(b.text));
  const vectors = embedder ? await embedder.embedMany(wordings.map((w) => w.text)) : undefined;
  const groups: Array<QuestionGroup & { leader?: Float32Array }> = [];
  for (const [i, w] of wordings.entries()) {
    const v = vectors?.[i];
    const home = v ? groups.find((g) => dot(g.leader!, v) >= sameMeaning) : undefined;
    if (home) {
      home.count += w.count;
      if (home.variants.length < 5) home.variants.push(w.text);
    } else groups.push({ question: w.text, count: w.count, variants: [], leader: v });
  }
  return groups.sort((a, b) => b.count - a.count).map(({ question, count, variants }) => ({ question, count, variants }));
}
