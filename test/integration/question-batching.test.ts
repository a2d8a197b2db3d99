// Questions that wait for the model together (a burst of readers asking at once) are embedded in one inference, still
// ahead of the passage batches of an ingest, and each gets the vector of its own text.
import { Embedder } from '../../src/search/embedder';
import { dot } from '../../src/search/vector-math';
import { testConfig } from '../support/config';

const config = testConfig();
let embedder: Embedder;

beforeAll(async () => {
  // One model thread and no vector cache: every text below is embedded now, and all of them queue for that thread.
  embedder = await Embedder.load(config.embeddingModelDir!, { threads: 1, batch: 8 });
});
afterAll(() => embedder?.close());

const questions = [
  'how do I publish a scoped package',
  'what does npm ci do differently from npm install',
  'how do I log in to the registry with two-factor authentication',
  'where is the global configuration file',
  'how do I deprecate an old version',
  'can I run a script before every install',
  'how do I see which packages are outdated',
  'what is a workspace',
];

it('eight questions waiting behind a passage batch take one inference, before the next passage batch, each with its own vector', async () => {
  const alone: Float32Array[] = [];
  for (const q of questions) alone.push(await embedder.embedQuery(q));
  const passages = Array.from({ length: 16 }, (_, i) => `Passage ${i}: the registry stores each published version of a package with its tarball, its manifest and the dist-tags that point at it.`);
  const before = embedder.queueStats();
  // Two passage batches of 8 go first: one takes the thread, one waits; then the questions queue behind the running one.
  const ingest = embedder.embedMany(passages);
  const asked = await Promise.all(questions.map((q) => embedder.embedQuery(q)));
  await ingest;
  const after = embedder.queueStats();

  expect(after.questions - before.questions).toBe(questions.length);
  expect(after.questionRuns - before.questionRuns).toBe(1);
  expect(after.passageBatchesAheadOfQuestions).toBe(before.passageBatchesAheadOfQuestions);
  // Embedded beside others, a question's vector moves a little (the int8 model quantizes per run), never to another's.
  for (const [i, v] of asked.entries()) {
    const similarities = alone.map((a) => dot(a, v));
    expect(similarities[i]).toBeGreaterThan(0.97);
    expect(similarities.indexOf(Math.max(...similarities))).toBe(i);
  }
});
