import { commentPrompt, isDocentAnswer, mentions, withoutMentions } from '../../src/github/mentions';
import { answerText } from '../../activities/agent-job/pull-request-answer';

describe('mentions of the handle', () => {
  it.each([
    ['@docent fix it', true],
    ['please, @Docent: fix it', true],
    ['(@docent) fix it', true],
    ['cc @docent-bot', false],
    ['mail me at me@docent.dev', false],
    ['see acme/@docent', false],
    ['no handle here', false],
    ['> @docent fix it\n\nI agree with the above', false],
    ['> earlier words\n@docent and now fix it', true],
  ])('%j mentions @docent: %s', (body, expected) => {
    expect(mentions(body, 'docent')).toBe(expected);
  });

  it('a handle with regex characters is matched literally', () => {
    expect(mentions('@my-bot go', 'my-bot')).toBe(true);
    expect(mentions('@myXbot go', 'my.bot')).toBe(false);
  });
});

describe('the prompt a comment gives', () => {
  it('a review comment names its file and line and carries the end of its hunk', () => {
    const hunk = `@@ -1,400 +1,400 @@\n${'-old line\n'.repeat(600)}+the commented line`;
    const prompt = commentPrompt('@docent rename this', { path: 'src/a.ts', line: 12, diffHunk: hunk })!;
    expect(prompt.startsWith('Review comment on src/a.ts line 12:\n@docent rename this')).toBe(true);
    expect(prompt).toContain('+the commented line\n```');
    expect(prompt.length).toBeLessThan(5000);
  });

  it('a comment longer than an instruction may be gives none', () => {
    expect(commentPrompt(`@docent ${'x'.repeat(40_000)}`)).toBeNull();
  });
});

describe('the answer', () => {
  it('carries the marker that keeps it from being read as an instruction, and mentions no one', () => {
    const text = answerText({
      jobId: 'job_1',
      turn: 2,
      reply: { repository: 'acme/w', pullNumber: 1, pullRequestUrl: 'https://github.com/acme/w/pull/1' },
      ending: { kind: 'unchanged', summary: 'Ask @docent again, or @octocat.' },
    });
    expect(isDocentAnswer(text)).toBe(true);
    expect(mentions(text, 'docent')).toBe(false);
    expect(text).not.toMatch(/@octocat/);
    expect(withoutMentions('a@b and @c')).toBe('a@\u200bb and @\u200bc');
  });
});
