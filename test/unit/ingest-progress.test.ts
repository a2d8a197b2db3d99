import { asIndexingProgress, describeIndexing, indexingProgress } from '../../src/docs/ingest-progress';

describe('ingest progress', () => {
  it('counts a page done once its last passage is indexed', () => {
    const tracker = indexingProgress(['a', 'a', 'a', 'b', 'c', 'c'], 1);
    expect(tracker.update(0, 0)).toMatchObject({ pages: 3, pagesDone: 0, total: 6, indexed: 0, reused: 1 });
    expect(tracker.update(2, 2).pagesDone).toBe(0);
    expect(tracker.update(3, 3).pagesDone).toBe(1);
    expect(tracker.update(4, 4).pagesDone).toBe(2);
    expect(tracker.update(6, 5).pagesDone).toBe(3);
  });

  it('has no rate or time left before the first passage is in', () => {
    const p = indexingProgress(['a'], 0).update(0, 0);
    expect(p.passagesPerSecond).toBeUndefined();
    expect(p.secondsLeft).toBeUndefined();
    expect(describeIndexing(p)).toBe('indexing: 0/1 pages, 0/1 passages');
  });

  it('prints pages, passages, the rate and the time left', () => {
    const line = describeIndexing({ phase: 'indexing', pages: 2177, pagesDone: 120, total: 41000, indexed: 3000, embedded: 3000, reused: 0, passagesPerSecond: 85.2, secondsLeft: 446 });
    expect(line).toBe('indexing: 120/2,177 pages, 3,000/41,000 passages, 85.2 passages/s, about 7m 26s left');
    expect(describeIndexing({ phase: 'indexing', pages: 1, pagesDone: 0, total: 9, indexed: 1, embedded: 1, reused: 0, passagesPerSecond: 0.1, secondsLeft: 4000 })).toMatch(/about 1h 7m left$/);
  });

  it('ignores heartbeat details of other phases or older workers', () => {
    expect(asIndexingProgress({ phase: 'parsing', parsed: 3, pages: 9 })).toBeUndefined();
    expect(asIndexingProgress({ phase: 'indexing', indexed: 3, total: 9 })).toBeUndefined();
    expect(asIndexingProgress(undefined)).toBeUndefined();
  });
});
