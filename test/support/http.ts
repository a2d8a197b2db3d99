// Bodies are read as the loose JSON a client sees.
export type JsonResponse = Omit<Response, 'json'> & { json(): Promise<any> };

/** One REST call with a bearer key and an optional JSON body. */
export const callApi = (baseUrl: string, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> =>
  fetch(baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });

/** A v2 (AI SDK 5+) assistant request body with one user message. */
export const v2Body = (text: string, extra: object = {}) => ({ fp: 'anonymous', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text }] }], ...extra });

/** The data frames of a v2 UI message stream, JSON-parsed, with the final `[DONE]` as a string. */
export const sseChunks = (raw: string): any[] =>
  raw
    .split('\n\n')
    .filter(Boolean)
    .map((f) => f.replace(/^data: /, ''))
    .map((d) => (d === '[DONE]' ? d : JSON.parse(d)));
