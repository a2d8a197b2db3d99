// Starts the slow readers of streams-1000 in their own process (bench/lib/stream-readers.ts) and opens groups of
// streams there: the process that runs the gateway and the bare floor then does no reading of its own.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ReaderCommand, ReaderEvent, StreamOutcome, StreamRequest } from './stream-readers-protocol';

export interface ReaderGroup {
  /** Resolves when every stream has its response headers, with their statuses. */
  headers: Promise<number[]>;
  /** Resolves when every stream has ended, with how each went and the most of them open at once. */
  done: Promise<{ outcomes: StreamOutcome[]; maxOpen: number }>;
  abort(): void;
}

export interface StreamReaders {
  open(requests: StreamRequest[], opts: { arrivals?: { every: number; pauseMs: number }; firstByteMs: number; idleMs: number }): ReaderGroup;
  close(): Promise<void>;
}

export async function startStreamReaders(): Promise<StreamReaders> {
  const child: ChildProcess = fork(path.join(__dirname, 'stream-readers.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<number, { headers(s: number[]): void; done(d: { outcomes: StreamOutcome[]; maxOpen: number }): void }>();
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`the readers' process exited (${code})`)));
  });
  child.on('message', (e: ReaderEvent) => {
    if (e.type === 'headers') waiting.get(e.id)?.headers(e.statuses);
    else if (e.type === 'done') {
      waiting.get(e.id)?.done({ outcomes: e.outcomes, maxOpen: e.maxOpen });
      waiting.delete(e.id);
    }
  });
  const send = (c: ReaderCommand) => child.send(c);
  let next = 0;
  return {
    open(requests, opts) {
      const id = next++;
      let headers!: (s: number[]) => void;
      let done!: (d: { outcomes: StreamOutcome[]; maxOpen: number }) => void;
      const group: ReaderGroup = {
        headers: new Promise((r) => (headers = r)),
        done: new Promise((r) => (done = r)),
        abort: () => send({ type: 'abort', id }),
      };
      waiting.set(id, { headers, done });
      send({ type: 'open', id, requests, ...opts });
      return group;
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      send({ type: 'exit' });
      await exited;
    },
  };
}
