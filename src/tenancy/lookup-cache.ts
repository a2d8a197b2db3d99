/** How many lookups a cache holds; beyond that the least recently used is dropped (and read again when asked). */
export const maxCachedLookups = 10_000;

interface Entry<V> {
  /** When the read began: an answer is never reused later than maxAgeMs after the database was asked. */
  startedAt: number;
  value: Promise<V>;
}

/**
 * Reuses database reads for at most `maxAgeMs`, so that a hot key or project costs one read per period instead of
 * one per request, while a change made elsewhere (a revocation by the CLI) is seen within that bound. Concurrent
 * requests for the same entry share one read. Answers that `keep` refuses (e.g. "not found") are not reused.
 */
export class LookupCache<K, V> {
  private readonly entries = new Map<K, Entry<V>>();

  constructor(
    private readonly maxAgeMs: number,
    private readonly keep: (value: V) => boolean = () => true,
    private readonly maxEntries = maxCachedLookups,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K, load: () => Promise<V>): Promise<V> {
    if (this.maxAgeMs <= 0) return load();
    const now = this.now();
    const hit = this.entries.get(key);
    if (hit && now - hit.startedAt < this.maxAgeMs) {
      this.entries.delete(key); // re-inserted last: the map's order is least recently used first
      this.entries.set(key, hit);
      return hit.value;
    }
    const entry: Entry<V> = { startedAt: now, value: load() };
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    const forget = () => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    };
    entry.value.then((v) => (this.keep(v) ? undefined : forget()), forget);
    return entry.value;
  }

  /** Forgets everything: this process changed what the cache holds (a revocation, a project update). */
  clear(): void {
    this.entries.clear();
  }
}
