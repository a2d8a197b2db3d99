/** Where the page sends its calls and with which keys; typed in by the user, never built into the bundle. */
export interface Settings {
  apiUrl: string;
  domain: string;
  projectId: string;
  assistantKey: string;
  adminKey: string;
}

/**
 * Initial values: `?api=&domain=&project=` from the query string, keys only from the fragment
 * (`#assistantKey=…&adminKey=…`), which browsers never send to a server or put in a Referer.
 */
export function initialSettings(location: Location): Settings {
  const query = new URLSearchParams(location.search);
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ''));
  return {
    apiUrl: (query.get('api') ?? location.origin).replace(/\/+$/, ''),
    domain: query.get('domain') ?? '',
    projectId: query.get('project') ?? '',
    assistantKey: fragment.get('assistantKey') ?? '',
    adminKey: fragment.get('adminKey') ?? '',
  };
}
