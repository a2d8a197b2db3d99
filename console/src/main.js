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
  if (parts[0] === 'audit') return { title: 'Audit log', render: auditPage };
  if (parts[0] === 'forges') return session?.orgId ? { redirect: forgesHref() } : { title: 'Forge connections', render: forgeOrgsPage };
  if (parts[0] === 'o' && parts[1] && parts[2] === 'forges') return { title: `Forge connections · ${parts[1]}`, render: (ctx) => forgesPage(ctx, parts[1]) };
  if (parts[0] === 'p' && parts[1]) {
    const p = parts[1];
    const tab = parts[2] ?? '';
    if (tab === 'jobs' && parts[3]) return { project: p, title: `Job ${parts[3]}`, render: (ctx) => jobPage(ctx, p, parts[3]) };
    const pages = { '': projectPage, keys: keysPage, jobs: jobsPage, automations: automationsPage, docs: docsPage, analytics: analyticsPage, webhooks: webhooksPage, github: githubPage };
    const page = pages[tab];
    if (page) return { project: p, title: `${projectTabs.find(([t]) => t === (tab && `/${tab}`))?.[1] ?? tab} · ${p}`, render: (ctx) => page(ctx, p) };
  }
  if (session?.kind === 'admin') return { redirect: `#/p/${encodeURIComponent(session.projectId)}` };
  return { title: 'Projects', render: projectsPage };
}

/** An operator key of one organization goes straight to its connections; one for all of them picks an organization. */
const forgesHref = () => (session?.orgId ? `#/o/${encodeURIComponent(session.orgId)}/forges` : '#/forges');

function renderNav(project) {
  const items = [];
  if (session.kind === 'operator') items.push(['#/projects', 'Projects'], [forgesHref(), 'Forge connections'], ['#/audit', 'Audit log']);
  if (project) for (const [tab, text] of projectTabs) items.push([`#/p/${encodeURIComponent(project)}${tab}`, text]);
  const current = location.hash.split('?')[0] || '#/projects';
  document.getElementById('nav').replaceChildren(
    h(
      'ul',
      {},
      items.map(([href, text]) => h('li', {}, h('a', { href, 'aria-current': href === current ? 'page' : undefined }, text))),
    ),
  );
  const scope = session.kind === 'operator' ? `operator key${session.orgId ? ` of ${session.orgId}` : ', all organizations'}` : `admin key of ${session.projectId}`;
  document.getElementById('who').replaceChildren(h('span', { 'data-testid': 'who' }, `Signed in with an ${scope}`), h('button', { type: 'button', onclick: signOut }, 'Sign out'));
}

async function render() {
  leave();
  leave = () => undefined;
  document.getElementById('toast').textContent = '';
  if (!session) {
    document.getElementById('nav').replaceChildren();
    document.getElementById('who').replaceChildren();
    document.title = 'Sign in · docent console';
    return signInPage(signedIn);
  }
  const r = route();
  if (r.redirect) {
    location.replace(r.redirect);
    return;
  }
  renderNav(r.project);
  document.title = `${r.title} · docent console`;
  show(h('p', {}, 'Loading…'));
  const ctx = { session, onLeave: (fn) => (leave = fn), rerender: render };
  try {
    await r.render(ctx);
  } catch (err) {
    show(h('h1', {}, r.title), h('p', { class: 'error', role: 'alert' }, err.message));
  }
}

async function signedIn(s) {
  session = s;
  setCsrfToken(s.csrfToken);
  await render();
}

async function signOut() {
  await call('DELETE', '/console/session').catch(() => undefined);
  session = undefined;
  setCsrfToken(undefined);
  location.hash = '';
  await render();
}

window.addEventListener('hashchange', () => void render());
window.addEventListener('console:signed-out', () => {
  if (!session) return;
  session = undefined;
  void render();
});

// A session cookie from an earlier visit is used if it still works; otherwise the sign-in page.
get('/console/session')
  .then((s) => signedIn(s))
  .catch(() => render());
