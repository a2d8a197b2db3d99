import { lstat, mkdir, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tool } from 'ai';
import { z } from 'zod';

export interface ToolLimits {
  /** Largest file the agent may write, in bytes. */
  maxWriteBytes: number;
  /** Largest file it may read whole, in bytes. */
  maxReadBytes: number;
}

export const defaultToolLimits: ToolLimits = { maxWriteBytes: 512 * 1024, maxReadBytes: 256 * 1024 };

/** Thrown for a path outside the workspace or inside .git; the model sees the message and can correct itself. */
class PathRefused extends Error {}

/** Resolves a model-supplied path inside root, refusing absolute paths, `..` escapes, .git and symlinks leading out. */
export async function resolveInside(root: string, requested: string): Promise<string> {
  if (typeof requested !== 'string' || requested.length === 0 || requested.length > 1024) throw new PathRefused('path must be 1-1024 characters');
  if (path.isAbsolute(requested)) throw new PathRefused('use a path relative to the repository root');
  const full = path.resolve(root, requested);
  const rel = path.relative(root, full);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) throw new PathRefused(`path "${requested}" is outside the repository`);
  if (rel.split(path.sep).includes('.git')) throw new PathRefused('the .git folder is off limits');
  // The deepest existing ancestor must really be inside root, so a symlink cannot lead out of it.
  let probe = full;
  for (;;) {
    const real = await realpath(probe).catch(() => null);
    if (real !== null) {
      const realRoot = await realpath(root);
      if (real !== realRoot && !real.startsWith(realRoot + path.sep)) throw new PathRefused(`path "${requested}" leads outside the repository`);
      break;
    }
    probe = path.dirname(probe);
  }
  return full;
}

async function walk(root: string, dir: string, out: string[], cap: number): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (out.length >= cap) return;
    if (entry.name === '.git') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await walk(root, full, out, cap);
    else if (entry.isFile()) out.push(path.relative(root, full));
  }
}

const refusal = (err: unknown) => ({ error: err instanceof PathRefused ? err.message : 'the operation failed' });

/** The agent's file tools, every path confined to the workspace root. */
export function workspaceTools(root: string, limits: ToolLimits = defaultToolLimits) {
  return {
    list_files: tool({
      description: 'List files under a folder of the repository (default: the whole repository), up to 500.',
      inputSchema: z.object({ folder: z.string().optional().describe('folder relative to the repository root') }),
      execute: async ({ folder }) => {
        try {
          const dir = folder && folder !== '.' ? await resolveInside(root, folder) : root;
          const files: string[] = [];
          await walk(root, dir, files, 500);
          return { files: files.sort() };
        } catch (err) {
          return refusal(err);
        }
      },
    }),
    read_file: tool({
      description: 'Read a text file of the repository.',
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path: p }) => {
        try {
          const file = await resolveInside(root, p);
          const info = await lstat(file);
          if (info.size > limits.maxReadBytes) return { error: `file is larger than ${limits.maxReadBytes} bytes` };
          return { content: await readFile(file, 'utf8') };
        } catch (err) {
          return err instanceof PathRefused ? refusal(err) : { error: `cannot read ${p}: no such file` };
        }
      },
    }),
    search_files: tool({
      description: 'Find lines containing a text (case-insensitive) across the repository; up to 50 matches.',
      inputSchema: z.object({ text: z.string().min(1).max(200) }),
      execute: async ({ text }) => {
        const files: string[] = [];
        await walk(root, root, files, 5000);
        const needle = text.toLowerCase();
        const matches: Array<{ path: string; line: number; text: string }> = [];
        for (const f of files) {
          const full = path.join(root, f);
          if ((await lstat(full)).size > limits.maxReadBytes) continue;
          const lines = (await readFile(full, 'utf8')).split('\n');
          lines.forEach((l, i) => {
            if (matches.length < 50 && l.toLowerCase().includes(needle)) matches.push({ path: f, line: i + 1, text: l.slice(0, 300) });
          });
          if (matches.length >= 50) break;
        }
        return { matches };
      },
    }),
    write_file: tool({
      description: 'Create or replace a text file of the repository with the given content.',
      inputSchema: z.object({ path: z.string(), content: z.string() }),
      execute: async ({ path: p, content }) => {
        try {
          if (Buffer.byteLength(content) > limits.maxWriteBytes) return { error: `content is larger than ${limits.maxWriteBytes} bytes` };
          const file = await resolveInside(root, p);
          await mkdir(path.dirname(file), { recursive: true });
          await writeFile(file, content);
          return { written: p };
        } catch (err) {
          return refusal(err);
        }
      },
    }),
    edit_file: tool({
      description: 'Replace exactly one occurrence of `old` with `new` in a text file of the repository.',
      inputSchema: z.object({ path: z.string(), old: z.string().min(1), new: z.string() }),
      execute: async ({ path: p, old, new: replacement }) => {
        try {
          const file = await resolveInside(root, p);
          const content = await readFile(file, 'utf8');
          const count = content.split(old).length - 1;
          if (count !== 1) return { error: `expected exactly one occurrence of the text, found ${count}` };
          const next = content.replace(old, () => replacement);
          if (Buffer.byteLength(next) > limits.maxWriteBytes) return { error: `result is larger than ${limits.maxWriteBytes} bytes` };
          await writeFile(file, next);
          return { edited: p };
        } catch (err) {
          return err instanceof PathRefused ? refusal(err) : { error: `cannot edit ${p}: no such file` };
        }
      },
    }),
    delete_file: tool({
      description: 'Delete a file of the repository.',
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path: p }) => {
        try {
          const file = await resolveInside(root, p);
          await rm(file);
          return { deleted: p };
        } catch (err) {
          return err instanceof PathRefused ? refusal(err) : { error: `cannot delete ${p}: no such file` };
        }
      },
    }),
  };
}
