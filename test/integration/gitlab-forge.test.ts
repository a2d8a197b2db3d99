import { GitLabForge, gitlabWebhooks } from '../../src/forges/gitlab/gitlab-forge';
import { access, type GitLabDouble, startGitLabDouble } from '../support/gitlab-double';

// The gitlab module against a double that answers as GitLab REST v4 does: what a user of a GitLab connection would
// see of each call (drafts, one merge request per branch, roles, hooks, statuses), and what GitLab refuses.

let gitlab: GitLabDouble;
let maintainer: string;
let developer: string;
let reporter: string;
const api = () => `${gitlab.url}/api/v4`;
const hook = { url: 'http://127.0.0.1:1/forges/forge_1/webhook', secret: 'first-secret' };
const newPr = (head: string, draft: boolean) => ({ head, base: 'main', title: 'Add a guide', body: () => 'As asked.', draft, checksFailing: draft });

beforeAll(async () => {
  gitlab = await startGitLabDouble();
  await gitlab.createProject('acme/widgets', { 'README.md': '# Widgets\n' });
  await gitlab.createProject('other/secret', { 'README.md': '# Secret\n' });
  maintainer = gitlab.addUser('docent-bot', { 'acme/widgets': access.maintainer }).token;
  developer = gitlab.addUser('devi', { 'acme/widgets': access.developer }).token;
  reporter = gitlab.addUser('rory', { 'acme/widgets': access.reporter }).token;
  await gitlab.git.commitFiles('acme', 'widgets', { 'a.md': 'a\n' }, 'a', 'docent/job-a');
  await gitlab.git.commitFiles('acme', 'widgets', { 'b.md': 'b\n' }, 'b', 'docent/job-b');
}, 60_000);

afterAll(() => gitlab?.close());

it('reaches a project by its URL-encoded path: push from Developer up, null where the token cannot see it or is refused', async () => {
  expect(await new GitLabForge(api(), developer).reach('acme', 'widgets')).toEqual({ push: true });
  expect(await new GitLabForge(api(), reporter).reach('acme', 'widgets')).toEqual({ push: false });
  expect(await new GitLabForge(api(), maintainer).reach('other', 'secret')).toBeNull();
  expect(await new GitLabForge(api(), 'glpat-wrong').reach('acme', 'widgets')).toBeNull();
  expect(gitlab.requests.filter((r) => r.path.startsWith('/projects/acme')).map((r) => r.path)).toContain('/projects/acme%2Fwidgets');
});

it('opens a draft merge request as `Draft:`, and answers the open one for the branch instead of a second (GitLab: 409)', async () => {
  const repo = await new GitLabForge(api(), developer).repository('acme', 'widgets');
  const first = await repo.openPullRequest(newPr('docent/job-a', true));
  expect(first).toEqual({ number: 1, url: `${gitlab.url}/acme/widgets/-/merge_requests/1` });
  expect(gitlab.mergeRequest('acme/widgets', 1).title).toBe('Draft: Add a guide');
  expect(await repo.openPullRequest(newPr('docent/job-a', true))).toEqual(first);
  expect(await repo.openPullRequestOf('docent/job-a')).toEqual(first);
  expect(await repo.pullRequest(1)).toEqual({ open: true, merged: false, headRef: 'docent/job-a', headRepository: 'acme/widgets', url: first.url });
  expect(await repo.pullRequest(99)).toBeNull();
  expect(await repo.pullRequestDiff(1)).toContain('+++ b/a.md\n@@');
  expect(gitlab.mergeRequests('acme/widgets')).toHaveLength(1);
});

it('a race that finds GitLab already holding the merge request (409) answers that one', async () => {
  const repo = await new GitLabForge(api(), developer).repository('acme', 'widgets');
  const raced = Object.create(repo) as typeof repo;
  let asked = 0;
  // The first look finds none (the other attempt had not opened it yet); the POST then meets GitLab's 409.
  raced.openPullRequestOf = async (branch: string) => (asked++ === 0 ? null : repo.openPullRequestOf(branch));
  expect(await raced.openPullRequest(newPr('docent/job-a', false))).toMatchObject({ number: 1 });
  expect(gitlab.mergeRequests('acme/widgets')).toHaveLength(1);
});

it('a Reporter may not open one: GitLab answers 403 and the error says so without the token', async () => {
  const repo = await new GitLabForge(api(), reporter).repository('acme', 'widgets');
  const err = await repo.openPullRequest(newPr('docent/job-b', false)).catch((e: unknown) => e as Error & { status: number });
  expect(err).toMatchObject({ status: 403, message: 'GitLab answered HTTP 403 to POST /projects/acme%2Fwidgets/merge_requests' });
  expect(String(err)).not.toContain(reporter);
});

it('reads every page of the notes (offset pagination, x-next-page and link), oldest first, and reacts 👀 once', async () => {
  const repo = await new GitLabForge(api(), developer).repository('acme', 'widgets');
  for (let i = 0; i < 130; i++) await repo.comment(1, `note ${i}`);
  const notes = await repo.comments(1);
  expect(notes).toHaveLength(130);
  expect([notes[0]!.body, notes[129]!.body]).toEqual(['note 0', 'note 129']);
  await repo.react({ kind: 'comment', id: notes[0]!.id, number: 1, on: 'pull' });
  await repo.react({ kind: 'comment', id: notes[0]!.id, number: 1, on: 'pull' });
  expect(gitlab.mergeRequest('acme/widgets', 1).notes[0]!.awards).toEqual([{ name: 'eyes', userId: expect.any(Number) }]);
});

it('names the role of each user: Developer and up may push, Reporter and strangers not', async () => {
  const repo = await new GitLabForge(api(), maintainer).repository('acme', 'widgets');
  expect(await repo.permission('devi')).toEqual({ push: true, role: 'Developer' });
  expect(await repo.permission('rory')).toEqual({ push: false, role: 'Reporter' });
  expect(await repo.permission('nobody')).toEqual({ push: false, role: 'none' });
});

it('reports checks as the commit status `docent`; a retry of the same state is done, not an error', async () => {
  const repo = await new GitLabForge(api(), developer).repository('acme', 'widgets');
  const commit = (await gitlab.git.git('acme', 'widgets', 'rev-parse', 'refs/heads/docent/job-a')).trim();
  const report = { commit, conclusion: 'failure' as const, headline: '1 of 2 checks failed', output: { title: '', summary: '', text: '' } };
  expect(await repo.reportChecks(report)).toBe('commit-status');
  expect(await repo.reportChecks(report)).toBe('commit-status');
  expect(gitlab.statuses('acme/widgets')).toEqual([{ sha: commit, name: 'docent', state: 'failed', description: '1 of 2 checks failed' }]);
});

it('registers its project hook once with the secret as its token, updates it on a new secret, and says false below Maintainer', async () => {
  const forge = new GitLabForge(api(), maintainer);
  expect(await forge.registerWebhook('acme', 'widgets', hook)).toBe(true);
  expect(await forge.registerWebhook('acme', 'widgets', { ...hook, secret: 'rotated' })).toBe(true);
  expect(gitlab.hooks('acme/widgets')).toEqual([expect.objectContaining({ url: hook.url, token: 'rotated', note_events: true, merge_requests_events: true, issues_events: true, push_events: true })]);
  expect(await new GitLabForge(api(), developer).registerWebhook('acme', 'widgets', hook)).toBe(false);
});

it('git gets the token as the password of `oauth2`', () => {
  expect(new GitLabForge(api(), developer).gitUser).toBe('oauth2');
});

describe('webhooks', () => {
  const headers = (token: string | undefined, event: string) => ({
    'x-gitlab-event': event,
    'x-gitlab-event-uuid': 'e6f1c1a0-0000-4000-8000-000000000001',
    ...(token ? { 'x-gitlab-token': token } : {}),
  });

  it('verifies X-Gitlab-Token against the secret, and reads the delivery id and event', async () => {
    expect(await gitlabWebhooks.verify('s3cret', '{}', headers('s3cret', 'Push Hook'))).toBe(true);
    expect(await gitlabWebhooks.verify('s3cret', '{}', headers('s3cre', 'Push Hook'))).toBe(false);
    expect(await gitlabWebhooks.verify('s3cret', '{}', headers(undefined, 'Push Hook'))).toBe(false);
    expect(gitlabWebhooks.read({ ...headers('x', 'Note Hook'), 'idempotency-key': 'a1b2c3d4-0000-4000-8000-000000000009' })).toEqual({
      id: 'a1b2c3d4-0000-4000-8000-000000000009',
      event: 'Note Hook',
    });
  });

  it('an issue update that adds labels is `labeled` with each label it added; a push and an unknown hook keep their meaning', () => {
    const issue = gitlabWebhooks.normalize('Issue Hook', {
      object_kind: 'issue',
      user: { username: 'devi' },
      project: { path_with_namespace: 'acme/widgets' },
      object_attributes: { iid: 4, action: 'update', url: 'u', title: 'Docs are wrong', description: 'See', state: 'opened' },
      changes: { labels: { previous: [{ title: 'bug' }], current: [{ title: 'bug' }, { title: 'docent' }, { title: 'docs' }] } },
    });
    expect(issue).toMatchObject({ event: 'issues', payload: { action: 'labeled', label: { name: 'docent' }, added_labels: ['docent', 'docs'], sender: { login: 'devi' }, issue: { number: 4 } } });
    const pushed = gitlabWebhooks.normalize('Push Hook', { ref: 'refs/heads/main', after: '0'.repeat(40), commits: [], project: { path_with_namespace: 'acme/widgets' } });
    expect(pushed).toMatchObject({ event: 'push', payload: { ref: 'refs/heads/main', deleted: true, repository: { full_name: 'acme/widgets' } } });
    expect(gitlabWebhooks.normalize('Pipeline Hook', {}).event).toBe('pipeline_hook');
    expect(gitlabWebhooks.normalize('Note Hook', { object_attributes: { noteable_type: 'Commit' } }).event).toBe('commit_note');
  });
});
