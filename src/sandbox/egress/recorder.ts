// Turns the proxy's connections into a bounded number of job events: one each up to a cap, then one summary.
import type { EgressRecord } from './proxy';

/** Where the events go: `seq` 1..cap for single connections, 0 for the summary of the rest. */
export type EgressSink = (seq: number, data: Record<string, unknown>) => Promise<void>;

export const EGRESS_EVENTS_PER_TURN = 50;
/** Distinct (host, port, verdict) rows kept in the summary; the rest are only counted. */
const SUMMARY_ROWS = 50;

interface Row {
  host: string;
  port: number;
  allowed: boolean;
  connections: number;
  bytesOut: number;
  bytesIn: number;
}

export class EgressRecorder {
  private written = 0;
  private readonly rest = new Map<string, Row>();
  private restConnections = 0;
  private chain: Promise<void> = Promise.resolve();
  /** Writes that failed (the events store down): the turn goes on, the count says how many were lost. */
  failed = 0;

  constructor(
    private readonly sink: EgressSink,
    private readonly cap = EGRESS_EVENTS_PER_TURN,
  ) {}

  record(r: EgressRecord): void {
    if (this.written < this.cap) {
      this.written += 1;
      this.write(this.written, { ...r });
      return;
    }
    this.restConnections += 1;
    const key = `${r.allowed}:${r.host}:${r.port}`;
    const row = this.rest.get(key) ?? (this.rest.size < SUMMARY_ROWS ? { host: r.host, port: r.port, allowed: r.allowed, connections: 0, bytesOut: 0, bytesIn: 0 } : undefined);
    if (!row) return;
    row.connections += 1;
    row.bytesOut += r.bytesOut;
    row.bytesIn += r.bytesIn;
    this.rest.set(key, row);
  }

  /** Writes the summary of connections beyond the cap, and waits for every write. */
  async flush(): Promise<void> {
    if (this.restConnections > 0) {
      const rows = [...this.rest.values()];
      const listed = rows.reduce((n, r) => n + r.connections, 0);
      this.write(0, { summary: true, connections: this.restConnections, rows, unlisted: this.restConnections - listed });
      this.restConnections = 0;
      this.rest.clear();
    }
    await this.chain;
  }

  private write(seq: number, data: Record<string, unknown>): void {
    this.chain = this.chain.then(() =>
      this.sink(seq, data).catch(() => {
        this.failed += 1;
      }),
    );
  }
}
