import type { AnalyticsReport } from '../../src/analytics/docs-analytics';
import { testConfig } from '../support/config';
import { deleteTestIndexes, ingestMiniDocs, sameStack } from '../support/docs';
import { kilnDocsProjects } from '../support/docs-projects';
import { runDocent } from '../support/cli';
import { startGateway, type RunningGateway } from '../support/gateway';
import { v2Body } from '../support/http';

// Analytics of a docs domain: what readers asked, grouped by meaning, through the admin REST endpoint and the CLI.
const config = testConfig();
const domain = 'docs.kiln.test';
let gw: RunningGateway;
let asst: string;
let admin: string;
let otherAdmin: string;

const ask = async (text: string) => {
  const r = await fetch(`${gw.url}/discovery/v2/assistant/${domain}/message`, {
    method: 'POST',
    headers: { authorization: `Bearer ${asst}`, 'content-type': 'application/json' },
    body: JSON.stringify(v2Body(text)),
  });
  await r.text();
  return r.headers.get('x-thread-id')!;
};

beforeAll(async () => {
  await ingestMiniDocs(config, domain);
  gw = await startGateway(sameStack(config));
  ({ asst, admin, otherAdmin } = await kilnDocsProjects(gw, domain));

  for (const q of ['How do I install kiln?', 'How do I install kiln?', 'how can I install the kiln binary?', 'What is the capital of Australia?', 'capital city of Australia?\u001b[2J']) await ask(q);
  const rated = await ask('How do I bake my site with kiln?');
  const r = await fetch(`${gw.url}/discovery/v1/assistant/${domain}/feedback`, {
    method: 'POST',
    headers: { authorization: `Bearer ${asst}`, 'content-type': 'application/json' },
    body: JSON.stringify({ threadId: rated, rating: 'down', comment: 'which folder do I run it in?' }),
  });
  expect(r.status).toBe(204);
});
afterAll(async () => {
  await deleteTestIndexes(config);
  await gw?.stop();
});

function expectTheReport(report: AnalyticsReport) {
  expect(report.domain).toBe(domain);
  expect(report.volume).toEqual({ questions: 6, threads: 6, answered: 4, unanswered: 2, ratedUp: 0, ratedDown: 1 });
  // Three wordings of one question are one group; the most asked wording leads it.
  expect(report.topQuestions[0]).toEqual({ question: 'How do I install kiln?', count: 3, variants: ['how can I install the kiln binary?'] });
  expect(report.unanswered).toHaveLength(1);
  expect(report.unanswered[0]).toMatchObject({ count: 2 });
  expect(report.unanswered[0]!.question).toMatch(/capital/);
  expect(report.downRated).toEqual([expect.objectContaining({ question: 'How do I bake my site with kiln?', comment: 'which folder do I run it in?' })]);
}

describe('docs analytics', () => {
  it('GET /v2/agent/{projectId}/analytics reports volume, questions grouped by meaning, unanswered and down-rated ones', async () => {
    const r = await fetch(`${gw.url}/v2/agent/kiln/analytics?since=1d`, { headers: { authorization: `Bearer ${admin}` } });
    expect(r.status).toBe(200);
    expectTheReport((await r.json()) as AnalyticsReport);
  });

  it('refuses another project’s admin key (404), an assistant key (401/403) and a bad since (400)', async () => {
    expect((await fetch(`${gw.url}/v2/agent/kiln/analytics`, { headers: { authorization: `Bearer ${otherAdmin}` } })).status).toBe(404);
    expect([401, 403]).toContain((await fetch(`${gw.url}/v2/agent/kiln/analytics`, { headers: { authorization: `Bearer ${asst}` } })).status);
    const bad = await fetch(`${gw.url}/v2/agent/kiln/analytics?since=yesterday`, { headers: { authorization: `Bearer ${admin}` } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'invalid_argument', error: expect.stringContaining('since') });
  });

  it('`docent analytics --domain D --since 7d --json` prints the same report, and text without --json', async () => {
    const run = (...args: string[]) => runDocent(['analytics', ...args], { DOCENT_MONGO_DB: config.mongo.db });
    const json = await run('--domain', domain, '--since', '7d', '--json');
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    expectTheReport(JSON.parse(json.stdout) as AnalyticsReport);
    const text = await run('--domain', domain);
    expect(text.stdout).toContain('questions 6 in 6 threads: 4 answered, 2 not covered by the docs; rated up 0, down 1');
    expect(text.stdout).toMatch(/ {4}3 {2}How do I install kiln\?/);
    // A reader's terminal escape sequence (here: clear screen) is printed as text, not run by the operator's terminal.
    expect(text.stdout).not.toContain('\u001b');
  });
});
