// Whatever a worker's steps wait on inside the process (the forge's request spacing) is taken by project in turn, as
// Temporal's task queues dispatch them (docs/decisions/2026-12-02-worker-fairness.md): one project's backlog queued
// first does not hold another project's single step back until the backlog has drained.
import { AsyncLocalStorage } from 'node:async_hooks';

/** Whose turn a wait is: the project (Temporal's fairness key of the job) and its share against other projects. */
export interface TurnOwner {
  key: string;
  weight: number;
}

/** Work outside any job step (the gateway's own forge calls, a docs sync): one lane of its own, first come first served. */
const nobody: TurnOwner = { key: '', weight: 1 };

const owners = new AsyncLocalStorage<TurnOwner>();

/** Runs `fn` with `owner` as the owner of every turn it waits for (the worker's activity interceptor, src/jobs/fairness.ts). */
export function inTurnsOf<T>(owner: TurnOwner, fn: () => T): T {
  return owners.run(owner, fn);
}

/** The owner of what the caller waits for now. */
export const turnOwner = (): TurnOwner => owners.getStore() ?? nobody;

interface Lane {
  /** Virtual time this lane's next turn starts at: its served turns, each 1/weight long. */
  pass: number;
  waiting: Array<() => void>;
}

/**
 * At most `capacity` callers at once; when more wait, the next turn goes to the project that has had the least of
 * the gate in proportion to its weight (stride scheduling), its own callers first come first served. A project that
 * comes back after waiting for nothing starts at the current virtual time: idle time banks no turns.
 */
export class TurnGate {
  private running = 0;
  private now = 0;
  private readonly lanes = new Map<string, Lane>();

  constructor(readonly capacity: number) {}

  /** Runs `fn` in a turn of the caller's owner (turnOwner()), holding the turn until `fn` settles. */
  async take<T>(fn: () => Promise<T>, owner: TurnOwner = turnOwner()): Promise<T> {
    await this.turn(owner);
    try {
      return await fn();
    } finally {
      this.running--;
      this.next();
    }
  }

  /** Callers waiting now, by owner key (for tests and logs). */
  waiting(): Record<string, number> {
    return Object.fromEntries([...this.lanes].filter(([, l]) => l.waiting.length).map(([k, l]) => [k, l.waiting.length]));
  }

  private turn(owner: TurnOwner): Promise<void> {
    const lane = this.lanes.get(owner.key) ?? { pass: this.now, waiting: [] };
    lane.pass = Math.max(lane.pass, this.now);
    this.lanes.set(owner.key, lane);
    const weight = owner.weight > 0 ? owner.weight : 1;
    return new Promise<void>((resolve) => {
      lane.waiting.push(() => {
        this.now = lane.pass;
        lane.pass += 1 / weight;
        this.running++;
        resolve();
      });
      this.next();
    });
  }

  private next(): void {
    while (this.running < this.capacity) {
      let chosen: Lane | undefined;
      for (const lane of this.lanes.values()) if (lane.waiting.length && (!chosen || lane.pass < chosen.pass)) chosen = lane;
      if (!chosen) break;
      chosen.waiting.shift()!();
    }
    // A lane with nobody waiting and no turns ahead of the clock would start at `now` anyway: forget it.
    for (const [key, lane] of this.lanes) if (!lane.waiting.length && lane.pass <= this.now) this.lanes.delete(key);
  }
}
