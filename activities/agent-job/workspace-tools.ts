import { tool } from 'ai';
import { z } from 'zod';
import { CloneFs, PathRefused, type FileOwner } from './clone-fs';

export interface ToolLimits {
  /** Largest file the agent may write, in bytes. */
  maxWriteBytes: number;
  /** Largest file it may read whole, in bytes. */
  maxReadBytes: number;
}

export const defaultToolLimits: ToolLimits = { maxWriteBytes: 512 * 1024, maxReadBytes: 256 * 1024 };

const listCap = 500;
const searchFileCap = 5000;
const maxMatches = 50;
const maxMatchLineChars = 300;

type Match = { path: string; line: number; text: string };

/** The model sees refusals verbatim so it can correct itself; anything else becomes `fallback`, never a host path or stack. */
const failure = (err: unknown, fallback: string) => ({ error: err instanceof PathRefused ? err.message : fallback });

function matchingLines(file: string, content: string, needle: string, room: number): Match[] {
  const found: Match[] = [];
  const lines = content.split('\n');
  for (let i = 0; i < lines.length && found.length < room; i++) {
    const line = lines[i] ?? '';
    if (line.toLowerCase().includes(needle)) found.push({ path: file, line: i + 1, text: line.slice(0, maxMatchLineChars) });
  }
  return found;
}

async function searchFiles(clone: CloneFs, text: string, maxReadBytes: number): Promise<Match[]> {
  const needle = text.toLowerCase();
  const matches: Match[] = [];
  for (const file of await clone.listFiles(undefined, searchFileCap)) {
    // Files that are too large, vanished or were swapped for a link are simply not searched.
    const content = await clone.readFile(file, maxReadBytes).then(
      (bytes) => bytes.toString('utf8'),
      () => null,
    );
    if (content !== null) matches.push(...matchingLines(file, content, needle, maxMatches - matches.length));
    if (matches.length >= maxMatches) break;
  }
  return matches;
}

/** The agent's file tools, every path confined to the clone at root (see CloneFs). */
export function workspaceTools(root: string, limits: ToolLimits = defaultToolLimits, owner?: FileOwner) {
  const clone = new CloneFs(root, { owner });
  return {
    list_files: tool({
      description: `List files under a folder of the repository (default: the whole repository), up to ${listCap}.`,
      inputSchema: z.object({ folder: z.string().optional().describe('folder relative to the repository root') }),
      execute: async ({ folder }) => {
        try {
          return { files: await clone.listFiles(folder && folder !== '.' ? folder : undefined, listCap) };
        } catch (err) {
          return failure(err, 'the operation failed');
        }
      },
    }),
    read_file: tool({
      description: 'Read a text file of the repository.',
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path: p }) => {
        try {
          return { content: (await clone.readFile(p, limits.maxReadBytes)).toString('utf8') };
        } catch (err) {
          return failure(err, `cannot read ${p}: no such file`);
        }
      },
    }),
    search_files: tool({
      description: `Find lines containing a text (case-insensitive) across the repository; up to ${maxMatches} matches.`,
      inputSchema: z.object({ text: z.string().min(1).max(200) }),
      execute: async ({ text }) => {
        try {
          return { matches: await searchFiles(clone, text, limits.maxReadBytes) };
        } catch (err) {
          return failure(err, 'the operation failed');
        }
      },
    }),
    write_file: tool({
      description: 'Create or replace a text file of the repository with the given content.',
      inputSchema: z.object({ path: z.string(), content: z.string() }),
      execute: async ({ path: p, content }) => {
        try {
          if (Buffer.byteLength(content) > limits.maxWriteBytes) return { error: `content is larger than ${limits.maxWriteBytes} bytes` };
          await clone.writeFile(p, content);
          return { written: p };
        } catch (err) {
          return failure(err, 'the operation failed');
        }
      },
    }),
    edit_file: tool({
      description: 'Replace exactly one occurrence of `old` with `new` in a text file of the repository.',
      inputSchema: z.object({ path: z.string(), old: z.string().min(1), new: z.string() }),
      execute: async ({ path: p, old, new: replacement }) => {
        try {
          const content = (await clone.readFile(p, limits.maxReadBytes)).toString('utf8');
          const count = content.split(old).length - 1;
          if (count !== 1) return { error: `expected exactly one occurrence of the text, found ${count}` };
          const next = content.replace(old, () => replacement);
          if (Buffer.byteLength(next) > limits.maxWriteBytes) return { error: `result is larger than ${limits.maxWriteBytes} bytes` };
          await clone.writeFile(p, next);
          return { edited: p };
        } catch (err) {
          return failure(err, `cannot edit ${p}: no such file`);
        }
      },
    }),
    delete_file: tool({
      description: 'Delete a file of the repository.',
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path: p }) => {
        try {
          await clone.removeFile(p);
          return { deleted: p };
        } catch (err) {
          return failure(err, `cannot delete ${p}: no such file`);
        }
      },
    }),
  };
}
