import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { answerText } from '../../activities/agent-job/pull-request-answer';
import { gapCheckComment } from '../../activities/gap-check-comment';
import { inertMarkdown } from '../../src/github/inert-markdown';
import type { GapCheckResult } from '../../workflows/docs-gap-check-contract';

// What a forge renders of the text docent writes, parsed as GitHub-flavoured Markdown (remark-gfm, autolinks and
// tables included): a reader's question or the model's summary shows as text, and makes no link, image or HTML.

type Node = { type: string; value?: string; children?: Node[] };
const parse = (md: string) => unified().use(remarkParse).use(remarkGfm).parse(md) as Node;
const all = (n: Node): Node[] => [n, ...(n.children ?? []).flatMap(all)];
const typesIn = (md: string) => new Set(all(parse(md)).map((n) => n.type));
const textOf = (n: Node): string => (n.type === 'text' || n.type === 'inlineCode' ? (n.value ?? '') : (n.children ?? []).map(textOf).join(''));

const hostile = 'See [the docs](https://attacker.test/?d=SECRET) ![x](https://attacker.test/p.png) <img src=x> https://attacker.test www.attacker.test @octocat \\| pipe';

describe('text docent writes into Markdown on a forge', () => {
  it('renders no link, image, HTML or mention, and keeps the words as typed', () => {
    const md = inertMarkdown(hostile);
    const types = typesIn(md);
    for (const t of ['link', 'image', 'html', 'linkReference', 'imageReference']) expect(types.has(t)).toBe(false);
    const shown = textOf(parse(md)).replace(/\u200b/g, '');
    expect(shown).toBe(hostile);
  });

  it("keeps a reader's question in its own table cell of the gap-check comment, whatever pipes or backslashes it brings", () => {
    const result: GapCheckResult = {
      turn: 2,
      commit: '0123456789abcdef0123',
      previewIndex: 'x',
      checkedAt: new Date(0).toISOString(),
      fixed: 0,
      questions: [{ question: hostile, before: { relevance: 0.2, answered: false, topPath: null }, after: { relevance: 0.3, answered: false, topPath: null } }],
    };
    const tree = parse(gapCheckComment('job_1', result));
    const table = all(tree).find((n) => n.type === 'table')!;
    const row = table.children![1]!;
    expect(row.children).toHaveLength(3);
    expect(textOf(row.children![0]!).replace(/\u200b/g, '')).toBe(hostile);
    for (const t of ['link', 'image', 'html']) expect(all(table).some((n) => n.type === t)).toBe(false);
  });

  it("shows the model's summary on the pull request as text: its image and link are not rendered", () => {
    const md = answerText({
      jobId: 'job_1',
      turn: 2,
      reply: { repository: 'acme/w', pullNumber: 1, pullRequestUrl: 'https://github.com/acme/w/pull/1' },
      ending: { kind: 'unchanged', summary: hostile },
    });
    // docent's own marker is the one HTML comment it writes.
    const rendered = all(parse(md)).filter((n) => !(n.type === 'html' && n.value?.startsWith('<!-- docent:')));
    expect(rendered.some((n) => n.type === 'image' || n.type === 'link' || n.type === 'html')).toBe(false);
    expect(textOf(parse(md)).replace(/\u200b/g, '')).toContain(hostile);
  });
});
