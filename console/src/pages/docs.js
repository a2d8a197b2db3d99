import { enc, get } from '../api.js';
import { h, show } from '../dom.js';
import { askBox } from './ask.js';

/**
 * The project's documentation: the widget's snippet for its domain, ready to copy, and an Ask box. Following repositories, crawling
 * sites and their sync history come with the operator API's docs operations.
 */
export async function docsPage(_ctx, projectId) {
  const project = await get(`/v2/admin/projects/${enc(projectId)}`);
  const snippet = project.domain ? `<script src="${location.origin}/widget.js" data-domain="${project.domain}" data-key="docent_asst_…" defer></script>` : undefined;
  show(
    h('h1', {}, `Docs · ${projectId}`),
    h('p', {}, project.domain ? `Documentation domain: ${project.domain}` : 'This project has no documentation domain.'),
    snippet && h('h2', {}, 'Widget snippet'),
    snippet && h('p', {}, 'Put it on the docs site; make an assistant key on the Keys page and put it in place of docent_asst_….'),
    snippet && h('pre', { 'data-testid': 'snippet', tabindex: 0 }, snippet),
    snippet && h('button', { type: 'button', class: 'secondary', onclick: () => navigator.clipboard?.writeText(snippet) }, 'Copy snippet'),
    project.domain && askBox(project.domain),
  );
}
