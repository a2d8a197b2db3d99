import { call, get, setCsrfToken } from './api.js';
import { h, show } from './dom.js';
import { auditPage } from './pages/audit.js';
import { automationsPage } from './pages/automations.js';
import { analyticsPage } from './pages/analytics.js';
import { docsPage } from './pages/docs.js';
import { forgeOrgsPage, forgesPage } from './pages/forges.js';
import { jobPage } from './pages/job.js';
import { jobsPage } from './pages/jobs.js';
import { keysPage } from './pages/keys.js';
import { githubPage, webhooksPage } from './pages/webhooks.js';
import { projectPage, projectsPage } from './pages/projects.js';
import { signInPage } from './pages/sign-in.js';

let session;
/** Stops whatever the current page keeps running (an event stream) when another page opens. */
let leave = () => undefined;

const projectTabs = [
  ['', 'Settings'],
  ['/keys', 'Keys'],
  ['/jobs', 'Jobs'],
  ['/automations', 'Automations'],
  ['/docs', 'Docs'],
  ['/analytics', 'Analytics'],
  ['/webhooks', 'Webhooks'],
  ['/github', 'GitHub deliveries'],
];

/** The pages, by hash: #/projects, #/p/{id}[/tab], #/p/{id}/jobs/{jobId}, #/audit, #/forges, #/o/{org}/forges. */
function route() {
  const parts = location.hash.split('?')[0].replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'audit') return { section: 'audit', title: 'Audit log', render: auditPage };
  if (parts[0] === 'forges') return session?.orgId ? { redirect: forgesHref() } : { section: 'forges', title: 'Forge connections', render: forgeOrgsPage };
  if (parts[0] === 'o' && parts[1] && parts[2] === 'forges') return { section: 'forges', title: `Forge connections · ${parts[1]}`, render: (ctx) => forgesPage(ctx, parts[1]) };
  if (parts[0] === 'p' && parts[1]) {
    const p = parts[1];
    const tab = parts[2] ?? '';
    if (tab === 'jobs' && parts[3]) return { project: p, tab, inside: true, title: `Job ${parts[3]}`, render: (ctx) => jobPage(ctx, p, parts[3]) };
    const pages = { '': projectPage, keys: keysPage, jobs: jobsPage, automations: automationsPage, docs: docsPage, analytics: analyticsPage, webhooks: webhooksPage, github: githubPage };
    const page = pages[tab];
    if (page) return { project: p, tab, title: `${projectTabs.find(([t]) => t === (tab && `/${tab}`))?.[1] ?? tab} · ${p}`, render: (ctx) => page(ctx, p) };
  }
  if (session?.kind === 'admin') return { redirect: `#/p/${encodeURIComponent(session.projectId)}` };
  return { section: 'projects', title: 'Projects', render: projectsPage };
}

/** An operator key of one organization goes straight to its connections; one for all of them picks an organization. */
const forgesHref = () => (session?.orgId ? `#/o/${encodeURIComponent(session.orgId)}/forges` : '#/forges');

/** `aria-current` for a link: `page` on the page itself, `true` on the tab a deeper page (a job) belongs to. */
const currentMark = (isIt, inside) => (isIt ? (inside ? 'true' : 'page') : undefined);
const links = (items) =>
  h(
    'ul',
    {},
    items.map(([href, text, current]) => h('li', {}, h('a', { href, 'aria-current': current }, text))),
  );

/** The projects an operator key can switch between, read once per session. */
let projectList;
async function switchableProjects() {
  if (session.kind !== 'operator') return [session.projectId];
  projectList ??= get('/v2/admin/projects').then(
    (r) => r.projects.map((p) => p.id),
    () => [],
  );
  return projectList;
}

/** The project's own bar, under the global one: which project this is (an operator switches here) and its tabs. */
async function renderProjectBar(r) {
  const bar = document.getElementById('project-bar');
  if (!r.project) {
    bar.hidden = true;
    bar.replaceChildren();
    return;
  }
  const ids = await switchableProjects();
  const choices = ids.includes(r.project) ? ids : [r.project, ...ids];
  const tabHref = (id) => `#/p/${encodeURIComponent(id)}${r.tab ? `/${r.tab}` : ''}`;
  const picker =
    choices.length > 1
      ? h(
          'label',
          { class: 'inline' },
          h('span', {}, 'Project'),
          h(
            'select',
            { 'data-testid': 'project-switch', onchange: (e) => (location.hash = tabHref(e.target.value)) },
            choices.map((id) => h('option', { value: id, selected: id === r.project }, id)),
          ),
        )
      : h('span', {}, 'Project ', h('strong', { 'data-testid': 'current-project' }, r.project));
  const tabs = projectTabs.map(([tab, text]) => [`#/p/${encodeURIComponent(r.project)}${tab}`, text, currentMark(tab === (r.tab && `/${r.tab}`), r.inside)]);
  bar.replaceChildren(picker, h('nav', { 'aria-label': 'Project' }, links(tabs)));
  bar.hidden = false;
}

function renderNav(r) {
  const items = [];
  if (session.kind === 'operator') {
    items.push(
      ['#/projects', 'Projects', currentMark(r.section === 'projects')],
      [forgesHref(), 'Forge connections', currentMark(r.section === 'forges')],
      ['#/audit', 'Audit log', currentMark(r.section === 'audit')],
    );
  }
  document.getElementById('nav').replaceChildren(links(items));
  const scope = session.kind === 'operator' ? `operator key${session.orgId ? ` of ${session.orgId}` : ', all organizations'}` : `admin key of ${session.projectId}`;
  document.getElementById('who').replaceChildren(h('span', { 'data-testid': 'who' }, `Signed in with an ${scope}`), h('button', { type: 'button', onclick: signOut }, 'Sign out'));
}

/** Focus on the page's heading, so a keyboard or screen reader starts at the new page, not at the top of the document. */
function focusHeading() {
  const main = document.getElementById('main');
  const heading = main.querySelector('h1');
  if (heading) heading.tabIndex = -1;
  (heading ?? main).focus();
}

/** Draws the page for the current hash; `moved` when the user went somewhere (not a page redrawing itself after an action). */
async function render(moved = false) {
  leave();
  leave = () => undefined;
  document.getElementById('toast').textContent = '';
  if (!session) {
    document.getElementById('nav').replaceChildren();
    document.getElementById('who').replaceChildren();
    await renderProjectBar({});
    document.title = 'Sign in · docent console';
    return signInPage(signedIn);
  }
  const r = route();
  if (r.redirect) {
    location.replace(r.redirect);
    return;
  }
  // The projects page may have just made one: the switcher reads the list again.
  if (r.section === 'projects') projectList = undefined;
  renderNav(r);
  await renderProjectBar(r);
  document.title = `${r.title} · docent console`;
  show(h('p', {}, 'Loading…'));
  const ctx = { session, onLeave: (fn) => (leave = fn), rerender: render };
  try {
    await r.render(ctx);
  } catch (err) {
    show(h('h1', {}, r.title), h('p', { class: 'error', role: 'alert' }, err.message));
  }
  if (moved) focusHeading();
}

async function signedIn(s) {
  session = s;
  setCsrfToken(s.csrfToken);
  await render(true);
}

async function signOut() {
  await call('DELETE', '/console/session').catch(() => undefined);
  session = undefined;
  projectList = undefined;
  setCsrfToken(undefined);
  location.hash = '';
  await render();
}

window.addEventListener('hashchange', () => void render(true));
// The skip link moves focus past the bars to the page; the hash (the console's routes) stays as it is.
document.getElementById('skip').addEventListener('click', (e) => {
  e.preventDefault();
  focusHeading();
});
window.addEventListener('console:signed-out', () => {
  if (!session) return;
  session = undefined;
  projectList = undefined;
  void render();
});

// A session cookie from an earlier visit is used if it still works; otherwise the sign-in page.
get('/console/session')
  .then((s) => signedIn(s))
  .catch(() => render());
