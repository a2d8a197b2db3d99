import { LookupCache } from '../../src/tenancy/lookup-cache';

/** A cache on a clock the test moves, with a loader that counts its reads. */
function setUp(maxAgeMs: number, maxEntries = 100, keep?: (v: string | null) => boolean) {
  let now = 0;
  let reads = 0;
  const cache = new LookupCache<string, string | null>(maxAgeMs, keep, maxEntries, () => now);
  const lookup = (key: string, value: string | null = `value of ${key}`) =>
    cache.get(key, async () => {
      reads++;
      return value;
    });
  return { cache, lookup, reads: () => reads, advance: (ms: number) => (now += ms) };
}

describe('lookup cache', () => {
  it('reuses an answer for less than its maximum age, then reads again', async () => {
    const c = setUp(1_000);
    await c.lookup('k');
    c.advance(999);
    await c.lookup('k');
    expect(c.reads()).toBe(1);
    c.advance(1);
    await c.lookup('k');
    expect(c.reads()).toBe(2);
  });

  it('answers each key with its own read', async () => {
    const c = setUp(1_000);
    expect(await c.lookup('a')).toBe('value of a');
    expect(await c.lookup('b')).toBe('value of b');
    expect(c.reads()).toBe(2);
  });

  it('shares one read among concurrent requests', async () => {
    const c = setUp(1_000);
    await Promise.all([c.lookup('k'), c.lookup('k'), c.lookup('k')]);
    expect(c.reads()).toBe(1);
  });

  it('does not keep answers it was told not to keep, nor failed reads', async () => {
    const c = setUp(1_000, 100, (v) => v !== null);
    await c.lookup('missing', null);
    await c.lookup('missing', null);
    expect(c.reads()).toBe(2);
    const failing = new LookupCache<string, string>(1_000);
    let attempts = 0;
    const load = async () => {
      attempts++;
      if (attempts === 1) throw new Error('database down');
      return 'ok';
    };
    await expect(failing.get('k', load)).rejects.toThrow('database down');
    await new Promise((r) => setImmediate(r));
    await expect(failing.get('k', load)).resolves.toBe('ok');
  });

  it('holds at most its bound, dropping the least recently used', async () => {
    const c = setUp(60_000, 3);
    for (const k of ['a', 'b', 'c']) await c.lookup(k);
    await c.lookup('a'); // a is now the most recently used
    await c.lookup('d');
    expect(c.cache.size).toBe(3);
    const before = c.reads();
    await c.lookup('a');
    expect(c.reads()).toBe(before);
    await c.lookup('b');
    expect(c.reads()).toBe(before + 1);
  });

  it('reads every time with a maximum age of 0, and forgets everything on clear', async () => {
    const off = setUp(0);
    await off.lookup('k');
    await off.lookup('k');
    expect(off.reads()).toBe(2);
    const on = setUp(1_000);
    await on.lookup('k');
    on.cache.clear();
    await on.lookup('k');
    expect(on.reads()).toBe(2);
  });
});
