/** What a `<docent-assistant>` element is configured with: its attributes, or the script tag's data-* (boot.ts). */
export interface WidgetSettings {
  /** The gateway's base URL, e.g. https://docent.acme.dev. */
  apiUrl: string;
  domain: string;
  /** The public assistant key (docent_asst_…). */
  apiKey: string;
  title: string;
  starters: string[];
  /** A CSS colour for buttons, links and focus rings; the default when missing or not a colour. */
  accent?: string;
  filter: { version?: string; language?: string };
}

/** The element's attributes; boot.ts copies the script tag's `data-<name>` onto these. */
export const settingAttributes = ['api-url', 'domain', 'api-key', 'panel-title', 'starters', 'accent', 'filter-version', 'filter-language'] as const;

const defaultTitle = 'Ask AI';

/** Starter questions: separated by `|`, at most 4 shown, each at most 200 characters. */
export function parseStarters(raw: string | null): string[] {
  return (raw ?? '')
    .split('|')
    .map((s) => s.trim().slice(0, 200))
    .filter(Boolean)
    .slice(0, 4);
}

/** A colour the page's CSS accepts, else nothing: the value goes into a stylesheet only when it is one. */
export function parseAccent(raw: string | null): string | undefined {
  const value = raw?.trim();
  return value && CSS.supports('color', value) ? value : undefined;
}

export function readSettings(el: Element): WidgetSettings {
  const attr = (name: string) => el.getAttribute(name)?.trim() || undefined;
  const version = attr('filter-version');
  const language = attr('filter-language');
  return {
    apiUrl: (attr('api-url') ?? location.origin).replace(/\/+$/, ''),
    domain: attr('domain') ?? '',
    apiKey: attr('api-key') ?? '',
    title: attr('panel-title') ?? defaultTitle,
    starters: parseStarters(el.getAttribute('starters')),
    accent: parseAccent(el.getAttribute('accent')),
    filter: { ...(version ? { version } : {}), ...(language ? { language } : {}) },
  };
}
