// GitLab's webhook events in the names and shapes docent's intake reads (src/github/payloads.ts): a Note Hook on a merge
// request is a comment on a pull request, a Merge Request Hook that merges or closes is a closed pull request, a Push
// Hook a push, an Issue Hook that adds labels an issue labeled. Only the fields docent reads are carried over; what
// GitLab does not send (a comment's author association: docent asks the forge instead) is filled so it is never trusted.

type Json = Record<string, unknown>;

const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Events docent has no use for keep a name of their own (`pipeline_hook`), so the intake says which it ignored. */
const eventNames: Record<string, string> = {
  'Note Hook': 'issue_comment',
  'Merge Request Hook': 'pull_request',
  'Push Hook': 'push',
  'Issue Hook': 'issues',
};

const snake = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z]+/g, '_')
    .replace(/^_|_$/g, '')
    .slice(0, 60) || 'unknown';

/** The project a payload is about, as `owner/name` (GitLab's `path_with_namespace`). */
const repositoryOf = (p: Json) => ({ full_name: str(obj(p.project).path_with_namespace) });

/** A user as docent reads one: GitLab's username is its login. */
const userOf = (u: unknown) => ({ login: str(obj(u).username) });

/** GitLab's merge request actions in GitHub's words: merging or closing one is `closed`, merged or not. */
const pullActions: Record<string, string> = { open: 'opened', reopen: 'reopened', close: 'closed', merge: 'closed', update: 'synchronize' };

function note(p: Json): { event: string; payload: unknown } {
  const a = obj(p.object_attributes);
  const type = str(a.noteable_type);
  // A note on a commit or a snippet has no pull request or issue to steer.
  if (type !== 'MergeRequest' && type !== 'Issue') return { event: `${snake(type ?? 'unknown')}_note`, payload: p };
  const on = obj(type === 'MergeRequest' ? p.merge_request : p.issue);
  const url = str(on.url);
  return {
    event: 'issue_comment',
    payload: {
      // GitLab 16+ says `create` or `update`; before, a note hook was sent only when a note was created.
      action: a.action === undefined || a.action === 'create' ? 'created' : a.action === 'update' ? 'edited' : str(a.action),
      issue: { number: on.iid, html_url: url, title: str(on.title), body: str(on.description) ?? null, ...(type === 'MergeRequest' ? { pull_request: { html_url: url } } : {}) },
      comment: {
        id: a.id,
        body: str(a.note) ?? null,
        // GitLab's own notes ("added 1 commit") are no one's words.
        user: { ...userOf(p.user), ...(a.system === true ? { type: 'Bot' } : {}) },
        author_association: 'NONE',
      },
      repository: repositoryOf(p),
    },
  };
}

function mergeRequest(p: Json): { event: string; payload: unknown } {
  const a = obj(p.object_attributes);
  const action = str(a.action) ?? 'update';
  return {
    event: 'pull_request',
    payload: {
      action: pullActions[action] ?? action,
      pull_request: {
        number: a.iid,
        merged: action === 'merge' || a.state === 'merged',
        head: { ref: str(a.source_branch), sha: str(obj(a.last_commit).id), repo: obj(a.source).path_with_namespace ? { full_name: str(obj(a.source).path_with_namespace) } : null },
        base: { ref: str(a.target_branch) },
        merge_commit_sha: str(a.merge_commit_sha) ?? null,
        html_url: str(a.url),
        title: str(a.title),
        body: str(a.description) ?? null,
      },
      repository: repositoryOf(p),
    },
  };
}

const zeroSha = /^0+$/;

function push(p: Json): { event: string; payload: unknown } {
  const after = str(p.after);
  const commits = Array.isArray(p.commits) ? p.commits.map((c) => ({ id: str(obj(c).id), message: str(obj(c).message) ?? '' })) : undefined;
  return {
    event: 'push',
    payload: { ref: str(p.ref), after, deleted: after !== undefined && zeroSha.test(after), ...(commits ? { commits } : {}), repository: repositoryOf(p) },
  };
}

const titles = (v: unknown) => (Array.isArray(v) ? v.map((l) => str(obj(l).title)).filter((t): t is string => t !== undefined) : []);

/** An issue whose update added labels is `labeled`, with every label added (GitHub sends one delivery per label; GitLab one for all). */
function issue(p: Json): { event: string; payload: unknown } {
  const a = obj(p.object_attributes);
  const labels = obj(obj(p.changes).labels);
  const before = new Set(titles(labels.previous).map((t) => t.toLowerCase()));
  const added = titles(labels.current).filter((t) => !before.has(t.toLowerCase()));
  const action = str(a.action) ?? 'update';
  return {
    event: 'issues',
    payload: {
      action: action === 'update' && added.length > 0 ? 'labeled' : action === 'open' ? 'opened' : action === 'close' ? 'closed' : action,
      issue: { number: a.iid, html_url: str(a.url), title: str(a.title), body: str(a.description) ?? null },
      ...(added.length > 0 ? { label: { name: added[0] }, added_labels: added } : {}),
      sender: userOf(p.user),
      repository: repositoryOf(p),
    },
  };
}

/** X-Gitlab-Event and its payload, in docent's event names and shapes. */
export function normalizeGitLabEvent(event: string, payload: unknown): { event: string; payload: unknown } {
  const p = obj(payload);
  switch (eventNames[event]) {
    case 'issue_comment':
      return note(p);
    case 'pull_request':
      return mergeRequest(p);
    case 'push':
      return push(p);
    case 'issues':
      return issue(p);
    default:
      return { event: snake(event), payload };
  }
}
