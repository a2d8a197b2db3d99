import { commentPrompt, isDocentAnswer, mentions, withoutMentions } from '../../src/github/mentions';
import { deliverySubject } from '../../src/github/payloads';
import { signatureMatches } from '../../src/github/webhook-secrets';
import { Webhooks } from '@octokit/webhooks';
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

describe('what a delivery is about', () => {
  const repository = { full_name: 'Acme/Widgets' };
  const comment = (id: number, action = 'created') => ({ action, comment: { id, body: '@docent go', user: { login: 'a' }, author_association: 'MEMBER' }, repository });
  const closed = (sha: string) => ({ action: 'closed', pull_request: { number: 7, merged: true, head: { ref: 'docent/job_1', sha, repo: repository } }, repository });

  it('is the same for the same comment or pull-request head whatever the delivery, and differs otherwise', () => {
    expect(deliverySubject('issue_comment', comment(5))).toBe(deliverySubject('issue_comment', { ...comment(5), sender: { login: 'b' } }));
    expect(deliverySubject('issue_comment', comment(5))).not.toBe(deliverySubject('issue_comment', comment(6)));
    expect(deliverySubject('issue_comment', comment(5))).not.toBe(deliverySubject('issue_comment', comment(5, 'edited')));
    expect(deliverySubject('issue_comment', comment(5))).not.toBe(deliverySubject('pull_request_review_comment', comment(5)));
    expect(deliverySubject('pull_request', closed('a'.repeat(40)))).not.toBe(deliverySubject('pull_request', closed('b'.repeat(40))));
    expect(deliverySubject('push', { ref: 'refs/heads/main', after: 'c'.repeat(40), repository })).toContain('acme/widgets');
  });

  it('is undefined for events docent does not act on, or payloads without the fields', () => {
    expect(deliverySubject('star', { action: 'created', repository })).toBeUndefined();
    expect(deliverySubject('issue_comment', { action: 'created', repository })).toBeUndefined();
    expect(deliverySubject('push', { ref: 'refs/heads/main', repository })).toBeUndefined();
  });
});

describe('X-Hub-Signature-256', () => {
  it("matches GitHub's signature with the same secret only", async () => {
    const body = JSON.stringify({ zen: 'Half measures are as bad as nothing at all.' });
    const signature = await new Webhooks({ secret: 'the-secret-0123456789' }).sign(body);
    expect(await signatureMatches('the-secret-0123456789', body, signature)).toBe(true);
    expect(await signatureMatches('another-secret-0123456789', body, signature)).toBe(false);
    expect(await signatureMatches('the-secret-0123456789', `${body} `, signature)).toBe(false);
    expect(await signatureMatches('the-secret-0123456789', body, signature.slice(0, -1))).toBe(false);
    expect(await signatureMatches('the-secret-0123456789', body, `sha1=${signature.slice(7)}`)).toBe(false);
  });
});
