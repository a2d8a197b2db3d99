// Real documentation for the ingest benchmarks: the HTML manuals of Debian doc packages, fetched with apt-get,
// unpacked with dpkg-deb and turned into Markdown by the converter crawled sites go through. Kept outside the checkout,
// by package version, like the stack's other downloads.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pageFileOf } from '../../activities/docs-site';
import { htmlToMarkdown } from '../../src/docs/html-to-markdown';

/** 2,175 pages with readable content: the PostgreSQL 15 manual (1,169), SQLite's documentation (765) and git's manual pages (241). */
export const debianDocPackages = [
  { name: 'postgresql-doc-15', html: 'usr/share/doc/postgresql-doc-15/html', site: 'https://www.postgresql.org/docs/15/' },
  { name: 'sqlite3-doc', html: 'usr/share/doc/sqlite3', site: 'https://www.sqlite.org/' },
  { name: 'git-doc', html: 'usr/share/doc/git-doc', site: 'https://git-scm.com/docs/' },
] as const;

const run = (cmd: string, args: string[], cwd?: string) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

function candidateVersion(pkg: string): string {
  const version = /^Version: (.+)$/m.exec(run('apt-cache', ['show', '--no-all-versions', pkg]))?.[1];
  if (!version) throw new Error(`apt-cache knows no ${pkg}: run apt-get update`);
  return version;
}

async function htmlFiles(root: string, dir = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(root, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await htmlFiles(root, rel)));
    else if (e.isFile() && e.name.endsWith('.html')) out.push(rel);
  }
  return out.sort();
}

/**
 * A folder of Markdown pages, one folder per package (`postgresql-doc-15/sql-select.md` …), made once per set of
 * package versions under `<cacheDir>/bench-corpus`. Pages without readable content are left out.
 */
export async function debianDocsMarkdown(cacheDir: string, log: (line: string) => void = () => undefined): Promise<{ root: string; pages: number }> {
  const versions = debianDocPackages.map((p) => `${p.name}=${candidateVersion(p.name)}`);
  const key = createHash('sha256').update(versions.join('\n')).digest('hex').slice(0, 12);
  const root = path.join(cacheDir, 'bench-corpus', `debian-docs-${key}`);
  if (!existsSync(root)) {
    log(`fetching ${versions.join(', ')} with apt-get into ${root}`);
    const work = await mkdtemp(path.join(os.tmpdir(), 'docent-debian-docs-'));
    try {
      // apt-get download runs as the _apt user, which needs to write where it downloads.
      await chmod(work, 0o777);
      run('apt-get', ['download', '-q', ...versions], work);
      const partial = `${root}.partial`;
      await rm(partial, { recursive: true, force: true });
      for (const p of debianDocPackages) {
        const deb = (await readdir(work)).find((f) => f.startsWith(`${p.name}_`) && f.endsWith('.deb'))!;
        const unpacked = path.join(work, p.name);
        run('dpkg-deb', ['-x', path.join(work, deb), unpacked]);
        const htmlRoot = path.join(unpacked, p.html);
        for (const file of await htmlFiles(htmlRoot)) {
          const url = new URL(file, p.site);
          const page = htmlToMarkdown(await readFile(path.join(htmlRoot, file), 'utf8'), url.toString());
          if (!page) continue;
          const out = path.join(partial, p.name, pageFileOf(new URL(file, 'https://x/')));
          await mkdir(path.dirname(out), { recursive: true });
          await writeFile(out, page.markdown);
        }
      }
      await mkdir(path.dirname(root), { recursive: true });
      await rename(partial, root);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
  let pages = 0;
  const count = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (e.isDirectory()) await count(path.join(dir, e.name));
      else if (e.name.endsWith('.md')) pages++;
    }
  };
  await count(root);
  return { root, pages };
}
