// Every call goes to the gateway's own public and operator APIs; the session cookie is the credential (HttpOnly, so
// this script never holds it) and state-changing calls carry the session's CSRF token.
let csrfToken;

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.code;
  }
}

export const setCsrfToken = (token) => {
  csrfToken = token;
};

export async function call(method, path, body) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-docent-csrf'] = csrfToken;
  const res = await fetch(path, { method, headers, credentials: 'same-origin', ...(body !== undefined && { body: JSON.stringify(body) }) });
  const text = await res.text();
  const isJson = res.headers.get('content-type')?.startsWith('application/json');
  const parsed = isJson && text ? JSON.parse(text) : text;
  if (!res.ok) {
    const err = new ApiError(res.status, isJson ? parsed : undefined);
    if (res.status === 401) window.dispatchEvent(new CustomEvent('console:signed-out'));
    throw err;
  }
  return parsed;
}

export const get = (path) => call('GET', path);
export const post = (path, body) => call('POST', path, body ?? {});
export const patch = (path, body) => call('PATCH', path, body);
export const del = (path) => call('DELETE', path);
export const enc = encodeURIComponent;
