import { Octokit } from '@octokit/rest';
import { createPullRequestAnswerActivities } from '../../activities/agent-job/pull-request-answer';
import { ForgeRegistry } from '../../src/forges/forge-registry';
import { backedBy, startGitHubDouble, type GitHubDouble } from '../support/github-double';
import { startGitServer, type GitServer } from '../support/git-server';

// The answer at a turn's end, against the GitHub double over HTTP: posted once however often the activity runs.

const token = 'ghs_answertesttoken0123456789';
let git: GitServer;
let github: GitHubDouble;
let pull: { number: number; html_url: string };

beforeAll(async () => {
  git = await startGitServer(token);
  github = await startGitHubDouble({ token, ...backedBy(git) });
  await git.createRepo('acme', 'widgets', { 'README.md': '# Widgets\n' });
  await git.git('acme', 'widgets', 'branch', 'docent/job_answer', 'main');
  const octokit = new Octokit({ auth: token, baseUrl: github.apiUrl });
  ({ data: pull } = await octokit.rest.pulls.create({ owner: 'acme', repo: 'widgets', head: 'docent/job_answer', base: 'main', title: 'A change' }));
});

afterAll(async () => {
  await Promise.all([git?.close(), github?.close()]);
});

const settings = () => ({ forges: new ForgeRegistry(undefined, { apiUrl: github.apiUrl, gitUrl: git.url, token }), gitUrl: git.url });
const reply = () => ({ repository: 'acme/widgets', pullNumber: pull.number, pullRequestUrl: pull.html_url });

describe('answering on the pull request', () => {
  it('a retried answer finds the one an earlier attempt posted instead of posting twice', async () => {
    const { answerPullRequestComment } = createPullRequestAnswerActivities(settings());
    const input = {
      jobId: 'job_answer',
      turn: 2,
      reply: reply(),
      ending: { kind: 'pushed' as const, commit: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678', title: 'Fix typo', summary: 'Corrected it.' },
    };
    const first = await answerPullRequestComment(input);
    const again = await answerPullRequestComment(input);
    expect(again.commentId).toBe(first.commentId);
    const posted = github.comments.filter((c) => c.issue === pull.number);
    expect(posted).toHaveLength(1);
    expect(posted[0]!.body).toContain(`[\`a1b2c3d\`](${pull.html_url}/commits/a1b2c3d4e5f60718293a4b5c6d7e8f9012345678): Fix typo`);
    // Another turn's answer is its own comment.
    await answerPullRequestComment({ ...input, turn: 3, ending: { kind: 'unchanged', summary: 'Nothing needed @someone.' } });
    const third = github.comments.filter((c) => c.issue === pull.number).at(-1)!;
    expect(third.body).toContain('I changed nothing.');
    // Text from the model never notifies anyone.
    expect(third.body).not.toMatch(/@someone/);
    expect(github.rejected).toEqual([]);
  });

  it('a failed turn is answered with its error', async () => {
    const { answerPullRequestComment } = createPullRequestAnswerActivities(settings());
    await answerPullRequestComment({ jobId: 'job_answer', turn: 4, reply: reply(), ending: { kind: 'failed', error: { code: 'budget_exceeded', message: 'the job reached its cost cap' } } });
    expect(github.comments.at(-1)!.body).toContain('This instruction failed (`budget_exceeded`): the job reached its cost cap');
  });

  it('an answer to a pull request GitHub does not know fails without retrying', async () => {
    const { answerPullRequestComment } = createPullRequestAnswerActivities(settings());
    await expect(answerPullRequestComment({ jobId: 'job_answer', turn: 5, reply: { ...reply(), pullNumber: 999 }, ending: { kind: 'unchanged', summary: '' } })).rejects.toMatchObject({
      type: 'PullRequestRejected',
      nonRetryable: true,
    });
  });
});
