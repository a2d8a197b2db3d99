// The relevance floor on the npm docs: for floors around the configured one, how many off-topic questions would still
// get citations (false citations) and how many on-topic questions would be refused (false refusals).
// Run: tsc -p tsconfig.bench.json && node dist/bench/relevance-floor.js
import { isAnswerable } from '../src/assistant/relevance';
import { loadConfig } from '../src/config';
import { retrieveRanked, type Relevance } from '../src/search/docs-index';
import { offTopicQuestions, onTopicQuestions } from '../test/support/relevance-questions';
import { heldOutQuestions, heldOutQuestions2, identifierQueries, tuningQuestions } from '../test/support/retrieval-questions';
import { indexNpmDocs } from './lib/npm-docs';

const pct = (n: number, of: number) => `${n}/${of} (${((100 * n) / of).toFixed(1)}%)`;

async function main() {
  const configured = loadConfig({ ...process.env }).assistant.relevanceFloor;
  const { retrieval, domain, close } = await indexNpmDocs();
  try {
    const measure = async (qs: string[]) => Promise.all(qs.map((query) => retrieveRanked(retrieval, { domain, query, pageSize: 5 }).then((r) => ({ query, relevance: r.relevance }))));
    const sets: Array<[string, Array<{ query: string; relevance: Relevance }>, 'on' | 'off']> = [
      ['own on-topic', await measure(onTopicQuestions), 'on'],
      ['own off-topic', await measure(offTopicQuestions), 'off'],
      ['retrieval sets (tuning, held-out 1+2, identifiers)', await measure([...tuningQuestions, ...heldOutQuestions, ...heldOutQuestions2, ...identifierQueries].map(([q]) => q)), 'on'],
    ];
    if (process.argv.includes('--show')) {
      for (const [name, rows] of sets) for (const r of rows) console.log(`${name}\t${r.relevance.cosine?.toFixed(3)}\t${r.relevance.keywordMatch}\t${r.query}`);
    }
    const floors = [...new Set([0.2, 0.25, 0.3, 0.32, 0.35, 0.38, 0.4, 0.45, configured])].sort((a, b) => a - b);
    for (const floor of floors) {
      const parts = sets.map(([name, rows, kind]) => {
        const wrong = rows.filter((r) => isAnswerable(r.relevance, floor) !== (kind === 'on')).length;
        return `${name}: ${kind === 'on' ? 'false refusals' : 'false citations'} ${pct(wrong, rows.length)}`;
      });
      console.log(`floor ${floor.toFixed(2)}${floor === configured ? ' (configured)' : ''}: ${parts.join('; ')}`);
    }
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
