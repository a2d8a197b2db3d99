import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SetupCacheConfig } from '../../src/config';
import { archiveRefusal, createArchive, type ArchiveRoot } from './setup-archive';

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
   * Stores what setup left: `workspacePaths` below the clone and `homePaths` below HOME. An entry that would not
   * restore (it holds a link out) is not kept. Returns whether it was stored.
   */
  async store(key: string, owner: { project: string; generation: number }, roots: Record<ArchiveRoot, { dir: string; paths: string[] }>): Promise<boolean> {
    const target = this.folder(key);
    await mkdir(this.config.dir, { recursive: true, mode: 0o700 });
    const temp = path.join(this.config.dir, `.tmp-${randomBytes(8).toString('hex')}`);
    await mkdir(temp, { mode: 0o700 });
    try {
      let bytes = 0;
      for (const root of ROOTS) {
        const file = path.join(temp, archiveName(root));
        await createArchive(file, roots[root].dir, roots[root].paths);
        bytes += (await stat(file)).size;
      }
      const entry = { key, archives: { workspace: path.join(temp, archiveName('workspace')), home: path.join(temp, archiveName('home')) } };
      if (bytes > this.config.maxBytes || (await this.refusal(entry))) return false;
      const meta: EntryMeta = { ...owner, bytes };
      await writeFile(path.join(temp, 'meta.json'), JSON.stringify(meta));
      // Another job may have stored the same key meanwhile: theirs stays.
      const stored = await rename(temp, target).then(
        () => true,
        () => false,
      );
      if (stored) await this.evict(owner);
      return stored;
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
