import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { SetupCacheConfig } from '../../src/config';
import { archiveRefusal, type ArchiveRoot, type ArchiveWriter, workerArchive } from './setup-archive';
import { overBudget } from './setup-budget';

/** One stored setup: an archive per root and who it belongs to. */
export interface CachedSetup {
  key: string;
  archives: Record<ArchiveRoot, string>;
}

interface EntryMeta {
  project: string;
  generation: number;
  bytes: number;
}

const KEY = /^[0-9a-f]{64}$/;
/** The longest archiving a setup's result may take before it is given up (the turn goes on without storing). */
const defaultStoreDeadlineMs = 5 * 60_000;

export type StoreOutcome = { stored: true } | { stored: false; reason: string };

/** An entry's meta file, or undefined when it is not one (a torn write of an older version): such entries go. */
function parseMeta(text: string): EntryMeta | undefined {
  try {
    const meta = JSON.parse(text) as Partial<EntryMeta>;
    return typeof meta.project === 'string' && typeof meta.generation === 'number' && typeof meta.bytes === 'number' ? (meta as EntryMeta) : undefined;
  } catch {
    return undefined;
  }
}
const ROOTS: ArchiveRoot[] = ['workspace', 'home'];
const archiveName = (root: ArchiveRoot) => `${root}.tar.zst`;

/**
 * This worker's setup cache: one folder per key, written whole under a temporary name then renamed, so a reader never
 * sees half an entry. The meta file's time is the entry's last use; the least recently used go first past the cap.
 */
export class SetupCache {
  constructor(private readonly config: SetupCacheConfig) {}

  private folder(key: string): string {
    if (!KEY.test(key)) throw new TypeError('a setup cache key is a sha256 hex digest');
    return path.join(this.config.dir, key);
  }

  /** The entry stored under key, marked as just used; undefined when there is none. */
  async find(key: string): Promise<CachedSetup | undefined> {
    const dir = this.folder(key);
    const meta = path.join(dir, 'meta.json');
    const now = new Date();
    const present = await utimes(meta, now, now).then(
      () => true,
      () => false,
    );
    if (!present) return undefined;
    return { key, archives: { workspace: path.join(dir, archiveName('workspace')), home: path.join(dir, archiveName('home')) } };
  }

  /** Why the entry must not be restored (a link out, a climb, a .git path), or undefined when it may. */
  async refusal(entry: CachedSetup): Promise<string | undefined> {
    const found = await Promise.all(ROOTS.map(async (root) => [root, await archiveRefusal(entry.archives[root], root)] as const));
    const [root, why] = found.find(([, reason]) => reason !== undefined) ?? [];
    return why && `${root}: ${why}`;
  }

  async drop(key: string): Promise<void> {
    await rm(this.folder(key), { recursive: true, force: true });
  }

  /**
   * Stores what setup left: `paths` below each root's `dir`, archived by `write` (in the turn's sandbox; the worker's
   * own tar by default). Refused before any archiving when the files' apparent size passes the cache's cap, and
   * stopped while writing when an archive passes it, at the deadline, or when `signal` aborts. An entry that would not
   * restore (it holds a link out) is not kept. Says whether it was stored, and why not.
   */
  async store(
    key: string,
    owner: { project: string; generation: number },
    roots: Record<ArchiveRoot, { dir: string; paths: string[] }>,
    opts: { write?: ArchiveWriter; signal?: AbortSignal; deadlineMs?: number } = {},
  ): Promise<StoreOutcome> {
    const budget = this.config.maxBytes;
    for (const root of ROOTS) {
      if (await overBudget(roots[root].dir, roots[root].paths, budget)) return { stored: false, reason: `setup left more than the cache's ${budget} bytes in ${root} (sparse files count whole)` };
    }
    const write = opts.write ?? workerArchive({ workspace: roots.workspace.dir, home: roots.home.dir });
    const target = this.folder(key);
    await mkdir(this.config.dir, { recursive: true, mode: 0o700 });
    const temp = path.join(this.config.dir, `.tmp-${randomBytes(8).toString('hex')}`);
    await mkdir(temp, { mode: 0o700 });
    const stop = new AbortController();
    const deadline = AbortSignal.timeout(opts.deadlineMs ?? defaultStoreDeadlineMs);
    const signal = AbortSignal.any([stop.signal, deadline, ...(opts.signal ? [opts.signal] : [])]);
    try {
      let bytes = 0;
      for (const root of ROOTS) {
        // Counted as it is written: an archive past the budget is stopped there, not measured afterwards.
        const counted = new Transform({
          transform(chunk: Buffer, _enc, done) {
            bytes += chunk.length;
            if (bytes > budget) stop.abort();
            done(null, bytes > budget ? undefined : chunk);
          },
        });
        const file = createWriteStream(path.join(temp, archiveName(root)), { flags: 'wx', mode: 0o600 });
        const written = pipeline(counted, file);
        const wrote = await write(root, roots[root].paths, counted, signal).then(
          () => undefined,
          (err: Error) => err,
        );
        counted.end();
        await written.catch(() => undefined);
        if (bytes > budget) return { stored: false, reason: `the archive of ${root} passed the cache's ${budget} bytes` };
        if (deadline.aborted) return { stored: false, reason: `archiving took longer than ${Math.round((opts.deadlineMs ?? defaultStoreDeadlineMs) / 1000)} s` };
        if (wrote || signal.aborted) return { stored: false, reason: `archiving ${root} failed: ${wrote?.message ?? 'cancelled'}` };
      }
      const entry = { key, archives: { workspace: path.join(temp, archiveName('workspace')), home: path.join(temp, archiveName('home')) } };
      const refused = await this.refusal(entry);
      if (refused) return { stored: false, reason: `the archive would not restore: ${refused}` };
      const meta: EntryMeta = { ...owner, bytes };
      await writeFile(path.join(temp, 'meta.json'), JSON.stringify(meta));
      // Another job may have stored the same key meanwhile: theirs stays.
      const stored = await rename(temp, target).then(
        () => true,
        () => false,
      );
      if (!stored) return { stored: false, reason: 'another job stored the same key first' };
      await this.evict(owner);
      return { stored: true };
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }

  /** Drops the project's entries of older generations (a `cache clear`), then the least recently used past the cap. */
  private async evict(current: { project: string; generation: number }): Promise<void> {
    const entries: Array<{ key: string; used: number; meta: EntryMeta }> = [];
    for (const key of (await readdir(this.config.dir)).filter((k) => KEY.test(k))) {
      const file = path.join(this.config.dir, key, 'meta.json');
      const read = await Promise.all([readFile(file, 'utf8'), stat(file)]).catch(() => undefined);
      if (!read) continue;
      const meta = parseMeta(read[0]);
      if (!meta) await this.drop(key);
      else if (meta.project === current.project && meta.generation < current.generation) await this.drop(key);
      else entries.push({ key, used: read[1].mtimeMs, meta });
    }
    entries.sort((a, b) => b.used - a.used);
    let total = 0;
    for (const e of entries) {
      if (total + e.meta.bytes > this.config.maxBytes) await this.drop(e.key);
      else total += e.meta.bytes;
    }
  }
}
