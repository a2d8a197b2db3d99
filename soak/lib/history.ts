// The soak's history: one JSON line per operation, fault and memory sample, appended as they end (Jepsen-style: the
// checker reads it afterwards with the stores; soak/invariants.ts).
import { appendFileSync } from 'node:fs';

/** An operation the load generator ran and what it saw. `ok: false` is a refused or failed call, not a violation. */
export interface OpEntry {
  kind: 'op';
  op: string;
  start: number;
  end: number;
  ok: boolean;
  project?: string;
  jobId?: string;
  /** HTTP status, when the operation was one call. */
  status?: number;
  error?: string;
  /** Operation-specific facts the checker reads (event ids seen, an answer's outcome, …). */
  detail?: Record<string, unknown>;
}

export interface FaultEntry {
  kind: 'fault';
  fault: string;
  target: string;
  start: number;
  end: number;
  ok: boolean;
  error?: string;
}

export interface MemoryEntry {
  kind: 'memory';
  at: number;
  role: 'gateway' | 'worker';
  name: string;
  pid: number;
  rssBytes: number;
}

export interface MetaEntry {
  kind: 'meta';
  at: number;
  /** `load-start` and `load-end` bound the load generator's run: a fault counts as struck under load between them. */
  what: 'seed' | 'start' | 'load-start' | 'load-end' | 'drain-end' | 'end';
  seed?: number;
  settings?: Record<string, unknown>;
}

export type HistoryEntry = OpEntry | FaultEntry | MemoryEntry | MetaEntry;

/** Appends entries synchronously, so a harness killed mid-run leaves every line it wrote whole. */
export function historyWriter(file: string): (e: HistoryEntry) => void {
  return (e) => appendFileSync(file, `${JSON.stringify(e)}\n`);
}

/** Parses a history file; a torn last line (the harness killed mid-write) is skipped. */
export function parseHistory(text: string): HistoryEntry[] {
  const out: HistoryEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as HistoryEntry);
    } catch {
      // a torn line
    }
  }
  return out;
}
