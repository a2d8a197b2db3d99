// Retrieval quality and latency on the npm docs: top-5 page hits for the two tuning sets, the held-out and identifier sets, and
// search p50 over 200 sequential searches. Each set also reports how many questions have the right page anywhere in the
// top 20: the most a re-ranker of 20 candidates could put in the top 5. Indexes directly (no Temporal) into an index of its own, then deletes it.
// Run: npm run bench:retrieval (needs the local stack; DOCENT_EMBEDDINGS=off measures BM25 alone). Held-out misses
// stay hidden unless --show-held-out is given, so that tuning cannot look at them.
import { retrieveChunks } from '../src/search/docs-index';
import { heldOutQuestions, heldOutQuestions2, heldOutQuestions3, identifierQueries, tuningQuestions, tuningQuestions2 } from '../test/support/retrieval-questions';
import { indexNpmDocs } from './lib/npm-docs';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function main() {
  const showHeldOut = process.argv.includes('--show-held-out');
  const { retrieval, domain, close } = await indexNpmDocs();
  try {
    const sets = [
      ['tuning', tuningQuestions, true],
      ['tuning 2', tuningQuestions2, true],
      ['held-out', heldOutQuestions, showHeldOut],
      ['held-out 2', heldOutQuestions2, showHeldOut],
      ['held-out 3', heldOutQuestions3, showHeldOut],
      ['identifiers', identifierQueries, true],
    ] as const;
    for (const [name, set, show] of sets) {
      const misses: string[] = [];
      let inTop20 = 0;
      for (const [q, pages] of set) {
        const got = (await retrieveChunks(retrieval, { domain, query: q, pageSize: 5 })).map((p) => p.path);
        if (!pages.some((p) => got.includes(p))) misses.push(`  ${q} → ${got.join(', ')} (wanted ${pages.join(' or ')})`);
        const deep = (await retrieveChunks(retrieval, { domain, query: q, pageSize: 20 })).map((p) => p.path);
        if (pages.some((p) => deep.includes(p))) inTop20++;
      }
      console.log(`${name}: ${set.length - misses.length}/${set.length} with the right page in the top 5, ${inTop20}/${set.length} in the top 20`);
      if (show && misses.length) console.log(misses.join('\n'));
    }

    const questions = [...tuningQuestions, ...heldOutQuestions].map(([q]) => q);
    for (let i = 0; i < 20; i++) await retrieveChunks(retrieval, { domain, query: questions[i % questions.length]!, pageSize: 5 });
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      await retrieveChunks(retrieval, { domain, query: questions[i % questions.length]!, pageSize: 5 });
      times.push(performance.now() - t);
    }
    console.log(`search (200 sequential, retrieveChunks, pageSize 5): p50 ${pct(times, 50).toFixed(1)} ms, p95 ${pct(times, 95).toFixed(1)} ms`);
  } finally {
    await close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
