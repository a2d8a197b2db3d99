import { readersOf } from '../../src/gaps/gap-questions';

// The unanswered-questions trigger counts readers, not questions (src/automations/gap-trigger.ts).

const turn = (reader: string | undefined, threadId: string) => ({ threadId, turn: { userMessage: 'Can I pay by invoice?', answer: '', createdAt: new Date(0), ...(reader ? { reader } : {}) } });

describe('readers of failed questions', () => {
  it('one reader asking twenty times, in twenty threads, is one reader: below a threshold of five', () => {
    const asked = Array.from({ length: 20 }, (_, i) => turn('reader-a', `thr_${i}`));
    expect(readersOf(asked)).toBe(1);
    expect(readersOf(asked) >= 5).toBe(false);
  });

  it('five readers reach it; a turn stored before readers were kept counts its thread', () => {
    const asked = [...['a', 'b', 'c', 'd'].map((r, i) => turn(`reader-${r}`, `thr_${i}`)), turn(undefined, 'thr_old'), turn(undefined, 'thr_old')];
    expect(readersOf(asked)).toBe(5);
  });
});
