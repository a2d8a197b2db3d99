import { del, enc, get, patch, post } from '../api.js';
import { confirmAction } from '../confirm.js';
import { field, formValues, h, lines, show, table, toast, when } from '../dom.js';

/** An organization to put projects in: only an operator key of all organizations makes one. */
function newOrgForm(ctx) {
  const error = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    { class: 'box', 'aria-labelledby': 'new-org' },
    h('h2', { id: 'new-org' }, 'New organization'),
    field('Id (letters, digits, . _ -)', { name: 'id', required: true }),
    h('button', { type: 'submit' }, 'Create organization'),
    error,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const org = await post('/v2/admin/orgs', formValues(form));
      await projectsPage(ctx);
      toast(`Organization ${org.id} created`);
    } catch (err) {
      error.textContent = err.message;
    }
  });
  return form;
}

/** The organizations, each deletable once it has no projects (the API refuses otherwise and says why). */
function orgsTable(ctx, orgs, error) {
  const remove = (id) => async () => {
    const yes = await confirmAction({
      title: `Delete the organization ${id}?`,
      consequence: 'Its forge connections are removed and its operator keys revoked. An organization that still has projects is not deleted: delete those first.',
      action: 'Delete organization',
    });
    if (!yes) return;
    try {
      await del(`/v2/admin/orgs/${enc(id)}`);
      await projectsPage(ctx);
      toast(`Organization ${id} deleted`);
    } catch (err) {
      error.textContent = err.message;
    }
  };
  return table(
    ['Organization', 'Created', ''],
    orgs,
    (o) => [o.id, when(o.createdAt), h('button', { type: 'button', class: 'danger', onclick: remove(o.id), 'aria-label': `Delete organization ${o.id}` }, 'Delete')],
    {
      'data-testid': 'orgs',
    },
  );
}

/** Every project the operator key covers, a form to make one, and (operator of all organizations) the organizations. */
export async function projectsPage(ctx) {
  const allOrgs = ctx?.session?.kind === 'operator' && !ctx.session.orgId;
  const [{ projects }, orgList] = await Promise.all([get('/v2/admin/projects'), allOrgs ? get('/v2/admin/orgs') : { orgs: [] }]);
  const orgsError = h('p', { class: 'error', role: 'alert' });
  const error = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    { class: 'box', 'aria-labelledby': 'new-project' },
    h('h2', { id: 'new-project' }, 'New project'),
    field('Project id', { name: 'id', required: true }),
    field('Organization', { name: 'orgId', required: true }),
    field('Repository (owner/name or a git URL)', { name: 'repository', required: true }),
    field('Base ref', { name: 'ref', value: 'main', required: true }),
    field('Documentation domain', { name: 'domain', required: true }),
    field('Origins allowed to call the assistant (one a line)', { name: 'allowedOrigins', multiline: true }),
    h('button', { type: 'submit' }, 'Create project'),
    error,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const v = formValues(form);
      const p = await post('/v2/admin/projects', { ...v, allowedOrigins: lines(v.allowedOrigins) });
      location.hash = `#/p/${enc(p.id)}`;
    } catch (err) {
      error.textContent = err.message;
    }
  });
  show(
    h('h1', {}, 'Projects'),
    projects.length
      ? table(['Project', 'Organization', 'Repository', 'Domain'], projects, (p) => [h('a', { href: `#/p/${enc(p.id)}` }, p.id), p.orgId, p.repository, p.domain ?? '—'], { 'data-testid': 'projects' })
      : h('p', {}, 'No projects yet.'),
    form,
    allOrgs && h('section', { 'aria-labelledby': 'orgs-heading' }, h('h2', { id: 'orgs-heading' }, 'Organizations'), orgsTable(ctx, orgList.orgs, orgsError), orgsError),
    allOrgs && newOrgForm(ctx),
  );
}

/** What deleting a project removes, said before it goes (the API's DELETE /v2/admin/projects/{id} does exactly this). */
const projectDeletion =
  'Its keys are revoked; its automations (with their schedules and runs), webhook endpoints and secrets are deleted; its documentation domain is no longer served. Its jobs stay in the database but can no longer be read here; their pull requests stay on the forge. A project with a working job is not deleted. This cannot be undone.';

/** An operator moves the project (repository, base ref, docs domain) or deletes it. */
function sourceAndDeletion(ctx, project) {
  const error = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    { class: 'box', 'aria-labelledby': 'project-source' },
    h('h2', { id: 'project-source' }, 'Repository and domain'),
    field('Repository (owner/name or a git URL)', { name: 'repository', required: true, value: project.repository }),
    field('Base ref', { name: 'ref', required: true, value: project.ref }),
    field('Documentation domain (its assistant keys move with it)', { name: 'domain', required: true, value: project.domain ?? '' }),
    h('button', { type: 'submit' }, 'Save repository and domain'),
    error,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await patch(`/v2/admin/projects/${enc(project.id)}`, formValues(form));
      await projectPage(ctx, project.id);
      toast('Repository and domain saved');
    } catch (err) {
      error.textContent = err.message;
    }
  });
  const deleteError = h('p', { class: 'error', role: 'alert' });
  const remove = async () => {
    if (!(await confirmAction({ title: `Delete the project ${project.id}?`, consequence: projectDeletion, action: 'Delete project' }))) return;
    try {
      await del(`/v2/admin/projects/${enc(project.id)}`);
      location.hash = '#/projects';
      toast(`Project ${project.id} deleted`);
    } catch (err) {
      deleteError.textContent = err.message;
    }
  };
  const deletion = h(
    'section',
    { class: 'box', 'aria-labelledby': 'delete-project' },
    h('h2', { id: 'delete-project' }, 'Delete project'),
    h('p', {}, projectDeletion),
    h('button', { type: 'button', class: 'danger', onclick: remove }, 'Delete project'),
    deleteError,
  );
  return [form, deletion];
}

/** The README's first job in one click (the local forge's project `demo` has a README with a typo); without a model it says which setting is missing. */
const firstJobPrompt = 'Fix the typo in the README';
function firstJobBox(projectId) {
  const error = h('p', { class: 'error', role: 'alert' });
  const button = h('button', { type: 'button' }, 'Run a first job');
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const job = await post(`/v2/agent/${enc(projectId)}/job`, { prompt: firstJobPrompt });
      location.hash = `#/p/${enc(projectId)}/jobs/${enc(job.id)}`;
    } catch (err) {
      error.textContent = err.message;
      button.disabled = false;
    }
  });
  return h(
    'div',
    { class: 'box', 'data-testid': 'first-job' },
    h('p', {}, `An agent job with the instruction “${firstJobPrompt}”: it opens a pull request on the project's repository.`),
    button,
    error,
  );
}

const caps = ['maxTurnTokens', 'maxTurnMinutes', 'maxJobCostUsd'];

/** A project's settings (repository, setup and checks, network, caps, cache keys) and its secrets by name. */
export async function projectPage(_ctx, projectId) {
  // A gateway without DOCENT_SECRET_KEY stores no secrets: the page says so where they would be.
  const [project, secretList] = await Promise.all([get(`/v2/admin/projects/${enc(projectId)}`), get(`/v2/admin/projects/${enc(projectId)}/secrets`).catch((err) => err)]);
  const secrets = secretList instanceof Error ? undefined : secretList.secrets;
  const error = h('p', { class: 'error', role: 'alert' });
  const settings = h(
    'form',
    { class: 'box', 'aria-labelledby': 'sandbox-settings' },
    h('h2', { id: 'sandbox-settings' }, 'Setup, checks and network'),
    field('Setup commands (one a line)', { name: 'setup', multiline: true }),
    field('Check commands (one a line)', { name: 'check', multiline: true }),
    h('label', { class: 'inline' }, h('input', { type: 'checkbox', name: 'network', checked: project.sandboxNetwork === true }), h('span', {}, 'Network for sandboxed commands')),
    field('Allowed hosts (one a line; none: any public host)', { name: 'allowHosts', multiline: true }),
    field('Setup cache key files (one a line)', { name: 'cacheKeys', multiline: true }),
    caps.map((c) => field(`Cap: ${c}`, { name: c, type: 'number', min: 0, step: 'any', value: project[c] })),
    h('button', { type: 'submit' }, 'Save settings'),
    error,
  );
  settings.elements.namedItem('setup').value = (project.setupCommands ?? []).join('\n');
  settings.elements.namedItem('check').value = (project.checkCommands ?? []).join('\n');
  settings.elements.namedItem('allowHosts').value = (project.sandboxAllowHosts ?? []).join('\n');
  settings.elements.namedItem('cacheKeys').value = (project.setupCacheKeyFiles ?? []).join('\n');
  settings.addEventListener('submit', async (e) => {
    e.preventDefault();
    const v = formValues(settings);
    const check = lines(v.check);
    const capValues = Object.fromEntries(caps.filter((c) => v[c] !== '').map((c) => [c, Number(v[c])]));
    try {
      await patch(`/v2/admin/projects/${enc(projectId)}`, {
        setup: lines(v.setup),
        ...(check.length ? { check } : { clearChecks: true }),
        network: v.network === 'on',
        allowHosts: lines(v.allowHosts),
        cacheKeys: lines(v.cacheKeys),
        ...(Object.keys(capValues).length && { caps: capValues }),
      });
      toast('Settings saved');
    } catch (err) {
      error.textContent = err.message;
    }
  });
  // The sites whose pages may call the assistant from a browser: changed here, not only when the project is made.
  const originsError = h('p', { class: 'error', role: 'alert' });
  const origins = h(
    'form',
    { class: 'box', 'aria-labelledby': 'allowed-origins' },
    h('h2', { id: 'allowed-origins' }, 'Allowed origins'),
    field('Origins whose pages may use the assistant (one a line, scheme://host[:port])', { name: 'allowedOrigins', multiline: true }),
    h('button', { type: 'submit' }, 'Save origins'),
    originsError,
  );
  origins.elements.namedItem('allowedOrigins').value = (project.allowedOrigins ?? []).join('\n');
  origins.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await patch(`/v2/admin/projects/${enc(projectId)}`, { allowedOrigins: lines(formValues(origins).allowedOrigins) });
      await projectPage(_ctx, projectId);
      toast('Origins saved');
    } catch (err) {
      originsError.textContent = err.message;
    }
  });
  const secretError = h('p', { class: 'error', role: 'alert' });
  const secretForm = h(
    'form',
    { class: 'box', 'aria-labelledby': 'secrets' },
    h('h2', { id: 'secrets' }, 'Secrets'),
    h('p', { class: 'muted' }, 'Values are written, never read back.'),
    secrets === undefined ? h('p', { class: 'muted' }, secretList.message) : secrets.length ? table(['Name', 'Updated'], secrets, (s) => [s.name, when(s.updatedAt)]) : h('p', {}, 'No secrets.'),
    field('Name', { name: 'name', required: true }),
    h('label', {}, h('span', {}, 'Value'), h('input', { type: 'password', name: 'value', required: true, autocomplete: 'off' })),
    h('button', { type: 'submit' }, 'Save secret'),
    secretError,
  );
  secretForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await post(`/v2/admin/projects/${enc(projectId)}/secrets`, formValues(secretForm));
      await projectPage(_ctx, projectId);
      toast('Secret saved');
    } catch (err) {
      secretError.textContent = err.message;
    }
  });
  show(
    h('h1', {}, `Project ${project.id}`),
    table(['Organization', 'Repository', 'Base ref', 'Docs domain', 'Allowed origins'], [project], (p) => [p.orgId, p.repository, p.ref, p.domain ?? '—', (p.allowedOrigins ?? []).join(', ') || '—']),
    firstJobBox(projectId),
    settings,
    origins,
    secretForm,
    _ctx?.session?.kind === 'operator' && sourceAndDeletion(_ctx, project),
  );
}
