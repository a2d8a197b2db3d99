import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runDocent } from '../support/cli';
import { deleteTestIndexes, sameStack, startWorker, type RunningWorker } from '../support/docs';
import { startGateway, type RunningGateway } from '../support/gateway';
import { sseChunks, v2Body } from '../support/http';

// What `npm start` runs (infra/run.sh): docent's own docs/ served on docent.local, so a newcomer's first question about
// docent is answered and cited with no model configured and nothing typed by hand.
const docsFolder = path.resolve(__dirname, '../../docs');
let gw: RunningGateway;
let worker: RunningWorker;
let cacheDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  gw = await startGateway({ DOCENT_MODEL_PROVIDER: '' });
  worker = await startWorker(gw.deps.config);
  cacheDir = await mkdtemp(path.join(os.tmpdir(), 'docent-self-docs-'));
  env = sameStack(gw.deps.config, { DOCENT_LOG_LEVEL: 'silent' });
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  if (gw) await deleteTestIndexes(gw.deps.config);
  await gw?.stop();
  if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
});

/** Asks the assistant of docent.local, as the playground does, and returns the cited pages and the answer's text. */
async function ask(key: string, question: string): Promise<{ cited: string[]; text: string }> {
  const res = await fetch(`${gw.url}/discovery/v2/assistant/docent.local/message`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(v2Body(question)),
  });
  expect(res.status).toBe(200);
  const chunks = sseChunks(await res.text());
  return {
    cited: chunks.filter((c) => c.type === 'source-url').map((c) => String(c.url)),
    text: chunks
      .filter((c) => c.type === 'text-delta')
      .map((c) => c.delta)
      .join(''),
  };
}

/** The text of a served page's section: from the heading with `id` to the next heading, tags dropped. */
function sectionText(html: string, id: string): string {
  const start = html.indexOf(`id="${id}"`);
  if (start < 0) return '';
  const rest = html.slice(html.indexOf('>', start) + 1);
  const end = rest.search(/<h[1-6][ >]/);
  return (end < 0 ? rest : rest.slice(0, end))
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

describe('docent self-docs (npm start)', () => {
  it('answers "how do I approve a plan?" from docent’s own docs, citing the plan-approval page', async () => {
    const keyFile = path.join(cacheDir, 'self-docs-key');
    const first = await runDocent(['self-docs', docsFolder, '--key-file', keyFile, '--base-url', `${gw.url}/docs`], env);
    expect(first.stderr).toMatch(/done: .* serves \d+ pages/);
    expect(first.code).toBe(0);
    const key = first.stdout.trim();
    expect(key).toMatch(/^docent_asst_/);
    expect((await readFile(keyFile, 'utf8')).trim()).toBe(key);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);

    const { cited, text } = await ask(key, 'how do I approve a plan?');
    expect(cited[0]).toMatch(/\/plan-approval(#|$)/);
    expect(text.length).toBeGreaterThan(0);

    // A second start keeps the key and the index: nothing changed, nothing is embedded again.
    const again = await runDocent(['self-docs', docsFolder, '--key-file', keyFile, '--base-url', `${gw.url}/docs`], env);
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe(key);
    expect(again.stderr).toMatch(/unchanged/);
    newcomerKey = key;
  }, 180_000);

  let newcomerKey: string;
  it.each([
    ['how do I approve a plan?', /\/docs\/plan-approval(#|$)/],
    ['what does docent need to run an agent job?', /\/docs\/agent-jobs#what-an-agent-job-needs$/],
    ['how do I run docent on more than one machine?', /\/docs\/operations#scaling-out$/],
  ])('a newcomer asks "%s" with no model: the right page first, whole sentences quoted, every source link opens at its heading', async (question, page) => {
    const { cited, text } = await ask(newcomerKey, question);
    expect(cited[0]).toMatch(page);
    // Reader pages only: decision records and lab notes ("Reliability › Runs so far") are not cited as documentation.
    expect(cited.filter((url) => /\/docs\/(decisions\/|testing|layout|reliability)/.test(url))).toEqual([]);
    const quoted = [...text.matchAll(/^- \*\*.+?\*\*: (.+) \[(\d+)\]$/gm)].map((m) => ({ excerpt: m[1]!, source: cited[Number(m[2]) - 1]! }));
    expect(quoted.length).toBeGreaterThan(0);
    for (const url of new Set(cited)) {
      const r = await fetch(url);
      expect({ url, status: r.status }).toEqual({ url, status: 200 });
      const html = await r.text();
      const anchor = new URL(url).hash.slice(1);
      if (anchor) expect(html).toContain(`id="${anchor}"`);
      for (const q of quoted.filter((x) => x.source === url)) {
        // The quote starts where a word of its section starts: never mid-word, as "approved ({revision}) events" did.
        // Words only: the passage's plain text and the page's HTML spell list markers and links differently.
        const words = (t: string) => ` ${t.replace(/[^A-Za-z0-9]+/g, ' ').trim()} `;
        const opening = words(q.excerpt).split(' ').filter(Boolean).slice(0, 4).join(' ');
        expect({ opening, found: words(sectionText(html, anchor)).includes(` ${opening} `) }).toEqual({ opening, found: true });
      }
    }
  });
});
