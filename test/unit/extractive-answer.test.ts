import { extractiveAnswer, firstSentences } from '../../src/assistant/generate';

// The answer docent gives with no model: the opening sentences of the best passages, quoted whole.

const passage = (content: string) => ({ id: 'p1', path: 'plan-approval', url: 'https://docs.test/plan-approval', title: 'Plan first', headings: ['What a plan job shows'], content, score: 1 });

async function answerOf(content: string): Promise<string> {
  let text = '';
  for await (const e of extractiveAnswer({ passages: [passage(content)] })) if (e.type === 'text') text += e.delta;
  return text;
}

describe('the extractive answer', () => {
  it('quotes sentences that hold dotted names (plan.approved, agent-job.ts) whole, from their first word', async () => {
    const content =
      'Each plan is announced by a plan.ready event. The plan.revision ({revision, feedback}) and plan.approved ({revision}) events follow the rest. Projects take turns: see src/jobs/fairness.ts and workflows/agent-job.ts; its steps inherit both.';
    const text = await answerOf(content);
    expect(text).toContain('**Plan first › What a plan job shows**: Each plan is announced by a plan.ready event. The plan.revision');
    expect(text).not.toMatch(/: (ready|approved|ts\))/);
  });

  it('cuts a first sentence longer than the quote allows at a word, with an ellipsis, never inside one', () => {
    const long = `${'configuration '.repeat(40)}ends here.`;
    const quoted = firstSentences(long, 100);
    expect(quoted.length).toBeLessThanOrEqual(101);
    expect(quoted.endsWith('configuration…')).toBe(true);
  });

  it('stops at the last whole sentence that fits', () => {
    expect(firstSentences('One is short. Two is short too. Three would not fit in the quote at all, being long.', 32)).toBe('One is short. Two is short too.');
  });
});
