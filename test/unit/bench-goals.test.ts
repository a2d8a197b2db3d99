// Every benchmark bar can fail (issue 56): a goal row that could not be measured is "not met", failed requests are
// counted, and the fairness row fails when the floor (fairness off) would meet it too.
import type { Block } from '../../bench/lib/blocks';
import { addedGapGoal, allStreamsGoal, failedShown, fairnessGoal, heldAtLimitGoal, ingestFloorGoal, judgedRow, scaledFloorGoal } from '../../bench/lib/goals';
import { markdownTable } from '../../bench/lib/report';

const block = (latencies: number[], errors = 0): Block => ({ latencies, ops: latencies.length, errors, seconds: 1 });

describe('streams rows', () => {
  it('are not met when the streams of the largest load were never all open at once, even if every one completed', () => {
    expect(allStreamsGoal(1000, [{ completed: 1000, errors: 0, maxOpen: 380 }])).toEqual({ met: false, unmeasured: 'at most 380 of 1000 open at once' });
    expect(allStreamsGoal(1000, [{ completed: 1000, errors: 0, maxOpen: 1000 }])).toEqual({ met: true });
    expect(allStreamsGoal(1000, [{ completed: 998, errors: 2, maxOpen: 1000 }])).toEqual({ met: false });
    expect(allStreamsGoal(1000, [])).toMatchObject({ met: false });
  });

  it('are not met, never "not judged", when the floor itself was too slow to measure the added gap', () => {
    const all = [{ completed: 100, errors: 0, maxOpen: 100 }];
    const args = { n: 100, addedMs: 2, floorLimitMs: 500, maxAddedMs: 10, subject: all, floor: all };
    expect(addedGapGoal({ ...args, floorP99Ms: 120 })).toEqual({ met: true });
    expect(addedGapGoal({ ...args, floorP99Ms: 640 })).toEqual({ met: false, unmeasured: "the floor's own p99 gap was 640 ms (≥ 500 ms: the machine set the pace)" });
    expect(addedGapGoal({ ...args, floorP99Ms: 120, addedMs: 11 })).toEqual({ met: false });
    expect(addedGapGoal({ ...args, floorP99Ms: 120, subject: [{ completed: 97, errors: 3, maxOpen: 100 }] })).toEqual({ met: false, unmeasured: 'not every stream completed (97 of 100)' });
  });

  it('the held row is not met below the limit or when held streams never got past their setup', () => {
    const args = { limit: 1000, extraStatus: 429, extraHasCode: true };
    expect(heldAtLimitGoal({ ...args, open: 1000, pastSetup: 1000 })).toEqual({ met: true });
    expect(heldAtLimitGoal({ ...args, open: 640, pastSetup: 640 })).toEqual({ met: false, unmeasured: 'not at the limit: 640 of 1000 opened' });
    expect(heldAtLimitGoal({ ...args, open: 1000, pastSetup: 700 })).toEqual({ met: false, unmeasured: '700 of 1000 held streams got past their setup' });
    expect(heldAtLimitGoal({ ...args, open: 1000, pastSetup: 1000, extraStatus: -1 })).toEqual({ met: false });
  });
});

describe('the fairness row', () => {
  it('is not met on a run with fairness off on both sides: B waits behind the backlog', () => {
    const fifo = [{ finishedBeforeFinish: 57 }, { finishedBeforeFinish: 59 }];
    expect(fairnessGoal(60, fifo, fifo)).toEqual({ met: false });
  });

  it('is not met when the floor (fairness off) meets the bar too: the bar cannot tell on from off', () => {
    expect(fairnessGoal(60, [{ finishedBeforeFinish: 0 }], [{ finishedBeforeFinish: 2 }])).toEqual({
      met: false,
      unmeasured: "with fairness off B also finished before 6 of A's jobs: the bar does not tell on from off",
    });
  });

  it("is met when B finishes within A's first tenth with fairness on and not with it off, in every block", () => {
    expect(fairnessGoal(60, [{ finishedBeforeFinish: 3 }, { finishedBeforeFinish: 5 }], [{ finishedBeforeFinish: 41 }, { finishedBeforeFinish: 60 }])).toEqual({ met: true });
    expect(fairnessGoal(60, [{ finishedBeforeFinish: 3 }, { finishedBeforeFinish: 6 }], [{ finishedBeforeFinish: 41 }])).toEqual({ met: false });
    expect(fairnessGoal(60, [], [{ finishedBeforeFinish: 41 }])).toMatchObject({ met: false });
  });
});

describe('the ingest row', () => {
  it('is not met against a floor that ran on one of two cores, however fast docent read against it', () => {
    expect(ingestFloorGoal({ ratio: 1.6, floorCpuPerWall: 1.0, cores: 2 })).toEqual({ met: false, unmeasured: 'the floor kept 1.00 of 2 cores busy' });
  });
  it('is judged on the ratio once the floor kept every core busy', () => {
    expect(ingestFloorGoal({ ratio: 0.85, floorCpuPerWall: 1.93, cores: 2 })).toEqual({ met: true });
    expect(ingestFloorGoal({ ratio: 0.7, floorCpuPerWall: 1.93, cores: 2 })).toEqual({ met: false });
  });
});

describe('latency rows against a floor', () => {
  it('count failed requests and are not met when any failed, though the ones that worked were fast', () => {
    const fast = [block([5, 5, 5]), block([5, 6, 5])];
    const floor = [block([5, 5, 5]), block([5, 5, 5])];
    expect(scaledFloorGoal(fast, floor, 1.2, 1)).toEqual({ met: true });
    const dropped = [block([5, 5], 1), block([5, 6, 5])];
    expect(failedShown(dropped)).toBe('1 of 6 failed');
    expect(scaledFloorGoal(dropped, floor, 1.2, 1)).toEqual({ met: false, unmeasured: 'requests failed (docent: 1 of 6 failed)' });
    expect(scaledFloorGoal([block([50, 50])], [block([5, 5])], 1.2, 1)).toEqual({ met: false });
  });
});

describe('the results table', () => {
  it('shows a row that could not be measured as not met, with the reason', () => {
    const row = {
      bench: 'streams-1000',
      case: '1000 streams',
      ratio: '—',
      target: 'all open at once',
      subject: '',
      baseline: '',
      ...judgedRow(allStreamsGoal(1000, [{ completed: 1000, errors: 0, maxOpen: 380 }])),
    };
    expect(markdownTable([{ name: 'streams-1000', rows: [row], seconds: 1, notes: [] }])).toContain('| all open at once | **no**: at most 380 of 1000 open at once |');
  });
});
