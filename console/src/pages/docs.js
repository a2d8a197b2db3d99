import { confirmAction } from '../confirm.js';
import { ApiError, del, enc, get, post } from '../api.js';
import { field, fill, formValues, h, show, toast, when } from '../dom.js';
import { askBox } from './ask.js';

const every = (ms) => (ms % 86_400_000 === 0 ? `${ms / 86_400_000} d` : ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${Math.round(ms / 60_000)} min`);
const sourceText = (s) => (s.sitemap ? `the site ${s.sitemap}` : `${s.repository}@${s.ref}${s.docsPath ? `:${s.docsPath}` : ''}${s.baseUrl ? `, published at ${s.baseUrl}` : ''}`);

/** What one sync did, in a sentence (the operator API's DocsSyncResult). */
export function syncText(r) {
  const parts = [`${r.pages} pages indexed (${r.passages} passages)`];
  if (r.unchanged) parts.push('nothing changed since the last sync');
  else parts.push(`${r.pagesReembedded} read again`, `${r.pagesRemoved} removed`);
  if (r.fullRebuild) parts.push('full rebuild');
  if (r.pagesExcluded) parts.push(`${r.pagesExcluded} excluded by robots.txt`);
  if (r.errors?.length) parts.push(`${r.errors.length} could not be read`);
  return `${parts.join(', ')}; commit ${String(r.commit).slice(0, 12)}`;
}

/** The followed source, the last sync and the last one that succeeded, the next one, and a running sync's progress. */
function statusFacts(s) {
  const last = s.last;
  const progress = s.progress && `${s.progress.pagesDone} of ${s.progress.pages} pages, ${s.progress.indexed} of ${s.progress.total} passages indexed`;
  return h(
    'dl',
    { class: 'facts', 'data-testid': 'docs-status' },
    h('dt', {}, 'Follows'),
    h('dd', {}, sourceText(s.source)),
    h('dt', {}, 'Every'),
    h('dd', {}, every(s.everyMs)),
    h('dt', {}, 'Now'),
    h('dd', { 'data-testid': 'docs-running' }, s.running ? `syncing${progress ? `: ${progress}` : ''}` : 'idle'),
    h('dt', {}, 'Last sync'),
    h(
      'dd',
      { 'data-testid': 'docs-last' },
      last
        ? `${when(last.startedAt)}: ${last.status.toLowerCase()}${last.durationMs !== undefined ? ` in ${(last.durationMs / 1000).toFixed(1)} s` : ''}${last.error ? ` (${last.error})` : ''}`
        : 'none yet',
    ),
    h('dt', {}, 'Last successful sync'),
    h('dd', { 'data-testid': 'docs-last-success' }, s.lastSuccess ? syncText(s.lastSuccess) : 'none yet'),
    h('dt', {}, 'Next sync'),
    h('dd', {}, when(s.nextSyncAt)),
  );
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** What the domain serves now and its last one-off ingest (`docent docs ingest`, or what `npm start` runs for docent.local). */
function healthFacts(s) {
  const i = s.lastIngest;
  const ingest = !i
    ? 'none that Temporal still lists'
    : i.status === 'RUNNING'
      ? `running since ${when(i.startedAt)}${i.progress ? `: ${i.progress.pagesDone} of ${i.progress.pages} pages, ${i.progress.indexed} of ${i.progress.total} passages indexed` : ''}`
      : `${when(i.startedAt)}: ${i.status.toLowerCase()}${i.durationMs !== undefined ? ` in ${seconds(i.durationMs)}` : ''}${i.error ? ` (${i.error})` : `, ${i.pages} pages, ${i.passages} passages${i.unchanged ? ', nothing changed' : i.embedded !== undefined ? `, ${i.embedded} embedded` : ''}`}`;
  return h(
    'dl',
    { class: 'facts', 'data-testid': 'docs-health' },
    h('dt', {}, 'Pages'),
    h('dd', { 'data-testid': 'docs-pages' }, String(s.pages)),
    h('dt', {}, 'Passages'),
    h('dd', { 'data-testid': 'docs-passages' }, String(s.passages)),
    h('dt', {}, 'Last ingest'),
    h('dd', { 'data-testid': 'docs-last-ingest' }, ingest),
    ...(i?.source ? [h('dt', {}, 'Ingested from'), h('dd', {}, i.source)] : []),
  );
}

/** The served pages (GET …/pages), 100 at a time; a page's button shows its passages (GET …/page). */
function pageBrowser(docs) {
  const list = h('ul', { class: 'page-list', 'data-testid': 'docs-page-list' });
  const passages = h('div', { 'data-testid': 'docs-page-passages', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'More pages');
  const error = h('p', { class: 'error', role: 'alert' });
  let after;
  const showPage = async (p) => {
    error.textContent = '';
    try {
      const page = await get(`${docs}/page?path=${enc(p.path)}`);
      passages.replaceChildren(
        h('h3', {}, `${page.title} (${page.path})`),
        h('ol', {}, ...page.passages.map((x) => h('li', {}, h('p', { class: 'muted' }, x.headings.join(' › ') || page.title), h('p', {}, x.text)))),
      );
    } catch (err) {
      error.textContent = err.message;
    }
  };
  const load = async () => {
    error.textContent = '';
    try {
      const slice = await get(`${docs}/pages?limit=100${after ? `&after=${enc(after)}` : ''}`);
      list.append(
        ...slice.pages.map((p) =>
          h('li', {}, h('button', { type: 'button', class: 'link', onclick: () => showPage(p) }, `${p.title} (${p.path})`), ` · ${p.passages} passage${p.passages === 1 ? '' : 's'}`),
        ),
      );
      after = slice.next;
      more.hidden = !after;
    } catch (err) {
      error.textContent = err.message;
    }
  };
  more.addEventListener('click', load);
  void load();
  return h('section', { 'aria-labelledby': 'pages-title' }, h('h2', { id: 'pages-title' }, 'Pages'), error, list, more, passages);
}

/** A form that follows a docs repository or crawls a published site (POST /v2/admin/docs/{domain}/follow). */
function followForm(title, id, fields, bodyOf, onFollowed) {
  const error = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    { class: 'box', 'aria-labelledby': id },
    h('h2', { id }, title),
    ...fields,
    field('Every (e.g. 10m, 1h, 1d)', { name: 'every', value: '10m' }),
    h('button', { type: 'submit' }, title),
    error,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    const v = formValues(form);
    const body = Object.fromEntries(Object.entries({ ...bodyOf(v), every: v.every }).filter(([, value]) => value !== ''));
    try {
      await onFollowed(body);
      form.reset();
    } catch (err) {
      error.textContent = err.message;
    }
  });
  return form;
}

/**
 * The project's documentation: what its domain follows (a docs repository or a crawled site) with its last syncs and
 * Sync now, forms to follow one, the widget's snippet for the domain, ready to copy, and an Ask box. While a sync runs,
 * the status part alone is read again every two seconds, so nothing typed in the forms is lost.
 */
export async function docsPage(ctx, projectId) {
  const project = await get(`/v2/admin/projects/${enc(projectId)}`);
  if (!project.domain) return show(h('h1', {}, `Docs · ${projectId}`), h('p', {}, 'This project has no documentation domain.'));
  const docs = `/v2/admin/docs/${enc(project.domain)}`;
  const readStatus = () =>
    get(docs).catch((err) => {
      if (err instanceof ApiError && err.status === 404) return undefined;
      throw err;
    });
  const error = h('p', { class: 'error', role: 'alert' });
  const result = h('p', { 'data-testid': 'sync-result' });
  const section = h('div');
  const pagesPart = h('div');
  let timer;
  let browser;
  ctx.onLeave(() => clearTimeout(timer));

  const syncNow = async (e) => {
    const button = e.currentTarget;
    button.disabled = true;
    error.textContent = '';
    result.textContent = 'Sync queued…';
    try {
      // The operator API answers at once with the sync's id; the page asks where it is until it ends.
      const started = await post(`${docs}/syncs`);
      void refresh();
      for (;;) {
        const run = await get(`${docs}/syncs/${enc(started.id)}`);
        if (run.status === 'success') {
          result.textContent = `This sync: ${syncText(run.result)}`;
          toast('Sync done');
          break;
        }
        if (run.status === 'failure') throw new Error(`The sync failed: ${run.error}`);
        result.textContent =
          run.status === 'queued'
            ? 'Sync queued behind the one running…'
            : `Syncing…${run.progress ? ` ${run.progress.indexed} of ${run.progress.total} passages indexed` : run.crawl ? ` ${run.crawl.crawled} of ${run.crawl.pages} pages fetched${run.crawl.errors ? `, ${run.crawl.errors} could not be read` : ''}` : ''}`;
        await new Promise((r) => setTimeout(r, 1000));
      }
    } catch (err) {
      result.textContent = '';
      error.textContent = err.message;
    }
    await refresh();
  };
  const unfollow = async () => {
    error.textContent = '';
    const yes = await confirmAction({
      title: `Stop following for ${project.domain}?`,
      consequence: 'Its schedule is removed: the domain keeps serving what was last ingested, and changes to the source are no longer synced.',
      action: 'Stop following',
    });
    if (!yes) return;
    try {
      await del(`${docs}/follow`);
      toast(`${project.domain} is no longer followed`);
    } catch (err) {
      error.textContent = err.message;
    }
    await refresh();
  };
  const follow = async (body) => {
    const followed = await post(`${docs}/follow`, body);
    result.textContent = '';
    toast(followed.firstSyncStarted ? 'Following; the first sync has started' : 'Following');
    await refresh();
  };

  /** Reads the status again into its part of the page; again in two seconds while a sync runs. */
  async function refresh() {
    clearTimeout(timer);
    let status;
    try {
      status = await readStatus();
    } catch (err) {
      error.textContent = err.message;
      return;
    }
    fill(section, [
      status ? healthFacts(status) : h('p', { 'data-testid': 'docs-health' }, 'Nothing was ingested for this domain yet.'),
      status?.followed
        ? [
            statusFacts(status),
            h('div', { class: 'row' }, h('button', { type: 'button', onclick: syncNow }, 'Sync now'), h('button', { type: 'button', class: 'danger', onclick: unfollow }, 'Stop following')),
          ]
        : h('p', { 'data-testid': 'docs-status' }, 'Nothing is followed: the domain serves what was last ingested, if anything. Follow a docs repository or a site below.'),
    ]);
    if (status?.pages && !browser) {
      browser = pageBrowser(docs);
      pagesPart.replaceChildren(browser);
    }
    if (status?.running) timer = setTimeout(() => void refresh(), 2000);
  }

  const snippet = `<script src="${location.origin}/widget.js" data-domain="${project.domain}" data-key="docent_asst_…" defer></script>`;
  show(
    h('h1', {}, `Docs · ${projectId}`),
    h('p', {}, `Documentation domain: ${project.domain}`),
    h('h2', {}, 'Health'),
    error,
    section,
    result,
    pagesPart,
    followForm(
      'Follow a docs repository',
      'follow-repo',
      [
        field('Repository (owner/name or a git URL)', { name: 'repository', required: true }),
        field('Branch or tag', { name: 'ref', value: 'main' }),
        field('Docs folder in the repository (empty for all of it)', { name: 'docsPath' }),
        field('Published at (empty for https://domain)', { name: 'baseUrl' }),
      ],
      (v) => ({ repository: v.repository, ref: v.ref, docsPath: v.docsPath, baseUrl: v.baseUrl }),
      follow,
    ),
    followForm('Crawl a published site', 'follow-site', [field('Sitemap URL', { name: 'sitemap', required: true })], (v) => ({ sitemap: v.sitemap }), follow),
    h('h2', {}, 'Widget snippet'),
    h('p', {}, 'Put it on the docs site; make an assistant key on the Keys page and put it in place of docent_asst_….'),
    h('pre', { 'data-testid': 'snippet', tabindex: 0 }, snippet),
    h('button', { type: 'button', class: 'secondary', onclick: () => navigator.clipboard?.writeText(snippet) }, 'Copy snippet'),
    askBox(project.domain),
  );
  await refresh();
}
