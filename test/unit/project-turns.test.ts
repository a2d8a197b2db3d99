// What a step waits on inside the worker goes by project in turn (src/limits/project-turns.ts): the order in which a
// gate hands out turns when one project queued a backlog first.
import { throttling } from '@octokit/plugin-throttling';
import { throttleQueueOf } from '../../src/github/request-turns';
import { inTurnsOf, TurnGate, type TurnOwner } from '../../src/limits/project-turns';

/** Queues `owners`' calls at `gate` in this order; releases them one at a time and returns who ran in which order. */
async function order(gate: TurnGate, owners: TurnOwner[]): Promise<string[]> {
  const ran: string[] = [];
  const releases: Array<() => void> = [];
  const done = owners.map((owner) =>
    gate.take(
      () =>
        new Promise<void>((release) => {
          ran.push(owner.key);
          releases.push(release);
        }),
      owner,
    ),
  );
  for (let i = 0; i < owners.length; i++) {
    await new Promise((r) => setImmediate(r));
    releases.shift()?.();
  }
  await Promise.all(done);
  return ran;
}

const a = { key: 'a', weight: 1 };
const b = { key: 'b', weight: 1 };

describe('a gate taken by project in turn', () => {
  it("gives a project's single call the next turn after the one running, though another project queued 40 first", async () => {
    const ran = await order(new TurnGate(1), [...Array(40).fill(a), b]);
    expect(ran.indexOf('b')).toBe(1);
  });

  it('takes each project’s own calls first come first served', async () => {
    const gate = new TurnGate(1);
    const ran: number[] = [];
    await Promise.all([0, 1, 2, 3].map((i) => gate.take(async () => void ran.push(i), a)));
    expect(ran).toEqual([0, 1, 2, 3]);
  });

  it('shares turns between two backlogs in proportion to their weights', async () => {
    const heavy = { key: 'heavy', weight: 3 };
    const light = { key: 'light', weight: 1 };
    const ran = await order(new TurnGate(1), [...Array(12).fill(heavy), ...Array(12).fill(light)]);
    expect(ran.slice(0, 8).filter((k) => k === 'heavy')).toHaveLength(6);
  });

  it('banks no turns for a project that waited for nothing: it comes back level with the others', async () => {
    const gate = new TurnGate(1);
    await order(gate, Array(5).fill(a));
    const ran = await order(gate, [...Array(6).fill(b), ...Array(6).fill(a)]);
    // Had a's five earlier turns counted against it, b would have had the first six; level, they alternate.
    expect(ran.slice(0, 4).sort()).toEqual(['a', 'a', 'b', 'b']);
  });

  it('lets `capacity` calls run at once and no more', async () => {
    const gate = new TurnGate(3);
    let running = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 10 }, () =>
        gate.take(async () => {
          most = Math.max(most, ++running);
          await new Promise((r) => setImmediate(r));
          running--;
        }, a),
      ),
    );
    expect(most).toBe(3);
  });

  it('takes the owner from the step it runs in, and one lane for calls outside any step', async () => {
    const gate = new TurnGate(1);
    const hold = gate.take(() => new Promise<void>((r) => setImmediate(r)));
    const queued = [inTurnsOf(a, () => gate.take(async () => 'a')), inTurnsOf(a, () => gate.take(async () => 'a'))];
    expect(gate.waiting()).toEqual({ a: 2 });
    await Promise.all([hold, ...queued]);
  });
});

describe("GitHub's request queues", () => {
  it('sort a pull request’s creation into the 3 s queue, other writes into the 1 s one and reads into the shared ten', () => {
    const q = (method: string, url: string) => throttleQueueOf(method, url, throttling.triggersNotification);
    expect(q('POST', '/repos/{owner}/{repo}/pulls')).toBe('notifications');
    expect(q('POST', '/repos/{owner}/{repo}/issues/{issue_number}/comments')).toBe('notifications');
    expect(q('POST', '/repos/{owner}/{repo}/statuses/{sha}')).toBe('write');
    expect(q('GET', '/repos/{owner}/{repo}/pulls')).toBe('global');
    expect(q('POST', '/app/installations/{installation_id}/access_tokens')).toBe('auth');
  });
});
