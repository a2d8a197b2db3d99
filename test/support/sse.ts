/** One server-sent event as an EventSource would dispatch it. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** Parses text/event-stream frames as the WHATWG EventSource algorithm does (comments and `retry:` skipped). */
export function parseSse(raw: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of raw.replace(/\r\n?/g, '\n').split('\n\n')) {
    const e: SseEvent = { data: '' };
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'id') e.id = value;
      else if (field === 'event') e.event = value;
    }
    if (data.length) events.push({ ...e, data: data.join('\n') });
  }
  return events;
}

/**
 * Reads a job's event stream over HTTP: until the server ends it, or until `stopWhen` holds for the events so far
 * (then the client hangs up, as one that goes offline would).
 */
export async function readEventStream(url: string, key: string, opts: { lastEventId?: string; stopWhen?: (events: any[]) => boolean } = {}): Promise<{ status: number; events: any[]; raw: string }> {
  const aborter = new AbortController();
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...(opts.lastEventId ? { 'last-event-id': opts.lastEventId } : {}) },
    signal: aborter.signal,
  });
  if (!res.ok || !res.body) return { status: res.status, events: [], raw: await res.text() };
  const decoder = new TextDecoder();
  let raw = '';
  try {
    for await (const chunk of res.body) {
      raw += decoder.decode(chunk as Uint8Array, { stream: true });
      const complete = raw.slice(0, raw.lastIndexOf('\n\n') + 2);
      const events = parseSse(complete).map((e) => ({ ...JSON.parse(e.data), sseId: e.id, sseEvent: e.event }));
      if (opts.stopWhen?.(events)) {
        aborter.abort();
        return { status: res.status, events, raw: complete };
      }
    }
  } catch (err) {
    if (!aborter.signal.aborted) throw err;
  }
  return { status: res.status, events: parseSse(raw).map((e) => ({ ...JSON.parse(e.data), sseId: e.id, sseEvent: e.event })), raw };
}
