import { Cron } from 'croner';

/** How many of a schedule's next runs are read for its shortest interval: a day's worth at five minutes apart. */
const runsRead = 300;
/** Runs are read from a fixed instant, so the same cron gets the same answer whenever it is sent. */
const from = new Date('2026-01-05T00:00:00Z');

/** The runs of a cron expression (5 fields, or 6 with the second first), as croner reads it; throws a TypeError it cannot read. */
function runsOf(cron: string, timeZone: string): Date[] {
  return new Cron(cron, { paused: true, timezone: timeZone }).nextRuns(runsRead, from);
}

/** Whether croner reads the expression: a cron docent takes is one two parsers agree on (Temporal checks it again). */
export function cronReadable(cron: string): boolean {
  try {
    runsOf(cron, 'UTC');
    return true;
  } catch {
    return false;
  }
}

/** The shortest time between two consecutive runs of the schedule, in ms; Infinity when it runs at most once. */
export function shortestInterval(cron: string, timeZone: string): number {
  const runs = runsOf(cron, timeZone);
  let shortest = Number.POSITIVE_INFINITY;
  for (let i = 1; i < runs.length; i++) shortest = Math.min(shortest, runs[i]!.getTime() - runs[i - 1]!.getTime());
  return shortest;
}
