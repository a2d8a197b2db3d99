import { stemmer } from 'stemmer';

// Elasticsearch here has no analysis-common module (no `english` analyzer, no stemmer filter), so docent stems in
// Node, the same way for indexed text and for queries, and stores the result in `*_stem` fields.
const stopwords = new Set(
  (
    'a an and are as at be but by can do does for from has have how i if in into is it its me my no not of on or ' +
    'so such than that the their then there these they this to was what when where which who why will with you your'
  ).split(' '),
);

/** Lowercase word tokens of a text, as the standard analyzer would split them (letters and digits). */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Stemmed content words, space-separated: what the `*_stem` fields hold and what their queries ask for. */
export function stemText(text: string): string {
  return tokenize(text)
    .filter((t) => !stopwords.has(t))
    .map((t) => (/^\p{N}+$/u.test(t) ? t : stemmer(t)))
    .join(' ');
}
