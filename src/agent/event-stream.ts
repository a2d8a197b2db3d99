import { eventToJson, type JobEvent, type JobEventStore } from '../jobs/job-events';
import type { JobDoc } from '../jobs/job';
import type { JobStore } from '../jobs/job-store';

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

// After the job stops being active, how many more polls wait for the event that says so (it is written just after).
const settlePolls = 20;

/**
 * A job's stored events after `after`, then its live events until the job is no longer active and its final status
 * event has been sent. MongoDB here has no change streams (FerretDB), so it polls; ids make a resume exact.
 */
export async function* followJobEvents(
  d: { events: Pick<JobEventStore, 'after'>; jobs: Pick<JobStore, 'get'> },
  job: { projectId: string; jobId: string },
  after: number,
  signal: AbortSignal,
  pollMs = 250,
): AsyncGenerator<JobEvent> {
  for await (const item of followJob(d, job, after, signal, pollMs)) if ('event' in item) yield item.event;
}

/**
 * The same events interleaved with the job itself whenever it changes (WatchAgentJob sends both). A job with no
 * events at all (written before events existed) ends as soon as it is no longer active.
 */
export async function* followJob(
  d: { events: Pick<JobEventStore, 'after'>; jobs: Pick<JobStore, 'get'> },
  job: { projectId: string; jobId: string },
  after: number,
  signal: AbortSignal,
  pollMs = 250,
): AsyncGenerator<{ event: JobEvent } | { job: JobDoc }> {
  let last = after;
  let lastStatus: string | undefined;
  let settling = 0;
  let version = '';
  while (!signal.aborted) {
    const batch = await d.events.after(job.jobId, last);
    for (const e of batch) {
      last = e.seq;
      if (e.type === 'status') lastStatus = String(e.data.status);
      yield { event: eventToJson(e) };
    }
    if (batch.length > 0) continue;
    const current = await d.jobs.get(job.projectId, job.jobId);
    if (!current) return;
    const seen = `${current.status}|${current.updatedAt.getTime()}|${current.turn}`;
    if (seen !== version) {
      version = seen;
      yield { job: current };
    }
    const hasEvents = last > 0 || (await d.events.after(job.jobId, 0, 1)).length > 0;
    if (current.status !== 'active' && (!hasEvents || lastStatus === current.status || ++settling > settlePolls)) return;
    await sleep(pollMs, signal);
  }
}
