import { CloneHolds } from '../../activities/agent-job/clone-holds';

// The sweep's guard against removing a clone under a turn (activities/agent-job/workspace-sweeper.ts): what the
// store said is only trusted for steps that began before the sweep read it.

const removal = () => {
  const calls: string[] = [];
  return { calls, remove: (jobId: string) => async () => void calls.push(jobId) };
};

it('removes the clone of a job no step has held since the mark', async () => {
  const holds = new CloneHolds();
  await holds.using('job_a', async () => undefined);
  const mark = holds.mark();
  const { calls, remove } = removal();
  expect(await holds.removeUnlessUsedSince('job_a', mark, remove('job_a'))).toBe(true);
  expect(await holds.removeUnlessUsedSince('job_never', mark, remove('job_never'))).toBe(true);
  expect(calls).toEqual(['job_a', 'job_never']);
});

it('refuses while a step of the job runs, and when one began after the mark (a follow-up accepted since the store was read)', async () => {
  const holds = new CloneHolds();
  let finish!: () => void;
  const running = holds.using('job_a', () => new Promise<void>((r) => (finish = r)));
  const { calls, remove } = removal();
  expect(await holds.removeUnlessUsedSince('job_a', holds.mark(), remove('job_a'))).toBe(false);
  finish();
  await running;

  const mark = holds.mark();
  await holds.using('job_a', async () => undefined);
  expect(await holds.removeUnlessUsedSince('job_a', mark, remove('job_a'))).toBe(false);
  expect(calls).toEqual([]);
});

it('a step that begins during a removal waits for it, so it never works in a folder being deleted', async () => {
  const holds = new CloneHolds();
  const order: string[] = [];
  let done!: () => void;
  const removing = holds.removeUnlessUsedSince(
    'job_a',
    holds.mark(),
    () =>
      new Promise<void>((r) => {
        order.push('removal began');
        done = () => {
          order.push('removal ended');
          r();
        };
      }),
  );
  const step = holds.using('job_a', async () => void order.push('step ran'));
  await new Promise((r) => setImmediate(r));
  expect(order).toEqual(['removal began']);
  done();
  await Promise.all([removing, step]);
  expect(order).toEqual(['removal began', 'removal ended', 'step ran']);
});
