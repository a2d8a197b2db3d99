import type { JobEvent } from '../jobs/job-events';
import type { StreamLease } from '../auth/stream-leases';

/** A comment line every so often, so proxies and browsers keep a quiet stream open. */
const keepAliveMs = 15_000;

/** One SSE frame: the id a client resumes after, the event type, and the event as JSON. */
export const sseFrame = (e: JobEvent) => `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;

/** Encodes a job's events as text/event-stream, with keep-alive comments while nothing happens. */
export async function* encodeJobEvents(first: IteratorResult<JobEvent>, rest: AsyncGenerator<JobEvent>, lease: StreamLease): AsyncGenerator<string> {
  try {
    // Clients that lose the connection reconnect after 2 s with Last-Event-ID, per the EventSource standard.
    yield 'retry: 2000\n\n';
    if (first.done) return;
    yield sseFrame(first.value);
    let next = rest.next();
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<'tick'>((resolve) => {
        timer = setTimeout(() => resolve('tick'), keepAliveMs);
      });
      const r = await Promise.race([next, tick]);
      clearTimeout(timer);
      if (r === 'tick') {
        yield ': keep-alive\n\n';
        continue;
      }
      if (r.done) return;
      yield sseFrame(r.value);
      next = rest.next();
    }
  } finally {
    lease.release();
    await rest.return(undefined);
  }
}
