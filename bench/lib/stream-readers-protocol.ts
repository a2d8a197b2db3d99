// Messages between streams-1000 and its readers' process (bench/lib/stream-readers.ts).

export interface StreamRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** A stream read to its end (the time it was sent, each text delta's arrival, the end's), or how it failed. */
export type StreamOutcome = { sent: number; times: number[]; ended: number } | { error: string; status: number; body: string };

export type ReaderCommand =
  | {
      type: 'open';
      id: number;
      requests: StreamRequest[];
      /** Sent `every` streams at a time, `pauseMs` apart; all at once without it. */
      arrivals?: { every: number; pauseMs: number };
      firstByteMs: number;
      idleMs: number;
    }
  | { type: 'abort'; id: number }
  | { type: 'exit' };

export type ReaderEvent =
  | { type: 'ready' }
  /** Every stream of the group has its response headers (0: the request failed before them). */
  | { type: 'headers'; id: number; statuses: number[] }
  | { type: 'done'; id: number; outcomes: StreamOutcome[]; maxOpen: number };
