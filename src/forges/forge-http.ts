// One JSON request to a forge's REST API, as the Gitea and GitLab modules make them: the forge's own auth header,
// no redirect followed (a token never goes to another host), a bounded wait, and an error that keeps the answer.

const callTimeoutMs = 30_000;

/** A forge's refusal: its HTTP status and what it answered (its headers and body, never the request's token). */
export class ForgeRequestError extends Error {
  override name = 'ForgeRequestError';
  constructor(
    readonly status: number,
    forge: string,
    what: string,
    readonly response: { headers: Record<string, string>; data: unknown },
  ) {
    super(`${forge} answered HTTP ${status} to ${what}`);
  }
}

/** The status of a forge's refusal; undefined for any other failure (the network, a timeout). */
export const forgeStatus = (err: unknown) => (err instanceof ForgeRequestError ? err.status : undefined);

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export interface ForgeRequest {
  /** Named in errors: "Gitea answered HTTP 404 to GET /repos/…". */
  forge: string;
  apiUrl: string;
  /** The forge's own credential header, when there is a token. */
  auth: Record<string, string>;
  method: string;
  path: string;
  body?: unknown;
  /** `application/json` (parsed), or a type whose body is kept as text (a diff). */
  accept?: string;
}

export async function forgeRequest<T>(r: ForgeRequest): Promise<{ data: T; headers: Headers }> {
  const accept = r.accept ?? 'application/json';
  const res = await fetch(`${r.apiUrl}${r.path}`, {
    method: r.method,
    headers: { accept, 'user-agent': 'docent', ...r.auth, ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(r.body !== undefined ? { body: JSON.stringify(r.body) } : {}),
    signal: AbortSignal.timeout(callTimeoutMs),
    redirect: 'error',
  });
  const text = await res.text();
  const data: unknown = accept === 'application/json' ? (text ? safeJson(text) : null) : text;
  if (!res.ok) throw new ForgeRequestError(res.status, r.forge, `${r.method} ${r.path.split('?')[0]}`, { headers: Object.fromEntries(res.headers), data });
  return { data: data as T, headers: res.headers };
}
