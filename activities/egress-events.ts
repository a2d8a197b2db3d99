// The egress proxy's connections as job events: the one place their keys and type are chosen.
import type { EgressSink } from '../src/sandbox/egress';
import type { TurnJournal } from './turn-journal';

/** Writes egress event `seq` of this turn attempt (0: the summary beyond the per-turn cap) once, whatever retries. */
export function egressEventSink(journal: TurnJournal | undefined, jobId: string, turn: number, keyPrefix: string): EgressSink | undefined {
  if (!journal) return undefined;
  return async (seq, data) => {
    await journal.events.append(jobId, { key: `${keyPrefix}:egress${seq === 0 ? '-rest' : seq}`, type: 'egress', turn, data });
  };
}
