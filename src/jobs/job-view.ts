import { jobToJson, type JobDoc } from './job';
import { turnToJson, type TurnStore } from './job-turns';

/** The job as GET shows it: the list's fields plus every turn (the list stays light). */
export async function jobWithTurns(job: JobDoc, turns: Pick<TurnStore, 'list'>) {
  return { ...jobToJson(job), turns: (await turns.list(job._id, job)).map(turnToJson) };
}
