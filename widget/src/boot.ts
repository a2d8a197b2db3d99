import { defineDocentAssistant } from './element';
import type { settingAttributes } from './settings';

// widget.js: `<script src="https://<docent>/widget.js" data-domain=… data-key=… defer>` adds one <docent-assistant>
// to the page, configured from the tag's data-* attributes, talking to the gateway the script came from.
const script = document.currentScript as HTMLScriptElement | null;

function mount(): void {
  defineDocentAssistant();
  if (!script || document.querySelector('docent-assistant[data-from-script]')) return;
  const el = document.createElement('docent-assistant');
  el.dataset.fromScript = '';
  const data = script.dataset;
  const fromData: Record<(typeof settingAttributes)[number], string | undefined> = {
    'api-url': data.api ?? new URL(script.src, location.href).origin,
    domain: data.domain,
    'api-key': data.key,
    'panel-title': data.title,
    starters: data.starters,
    accent: data.accent,
    'filter-version': data.filterVersion,
    'filter-language': data.filterLanguage,
  };
  for (const [name, value] of Object.entries(fromData)) if (value) el.setAttribute(name, value);
  document.body.append(el);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', mount, { once: true });
else mount();
