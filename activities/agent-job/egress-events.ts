// The egress proxy's connections as job events, written through the ledger with keys from src/jobs/event-keys.ts.
import { eventKeys } from '../../src/jobs/event-keys';
import type { EgressSink } from '../../src/sandbox/egress';
import type { TurnJournal } from './turn-journal';

/** Writes egress event `seq` of this turn attempt (0: the summary beyond the per-turn cap) once, whatever retries. */
export function egressEventSink(journal: TurnJournal | undefined, jobId: string, turn: number, run: string): EgressSink | undefined {
  if (!journal) return undefined;
  return (seq, data) => journal.ledger.recordEgress(jobId, turn, eventKeys.egress(run, seq), data);
}
