// The model's tools in a turn: the file tools on the clone, run_command in the turn's sandbox, and the redaction every
// result goes through before the model sees it.
import { tool, type Tool } from 'ai';
import { z } from 'zod';
import type { CommandResult } from '../../src/sandbox';
import { redactDeep, type Redact } from '../../src/secrets/redactor';
import { CloneFs, PathRefused, type FileOwner } from './clone-fs';
import type { ContextClone } from './context-clones';

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

/** The optional argument naming a context repository: the tools' schemas have it only when the job has some. */
function repositoryArgument(context: ContextClone[]) {
  const names = context.map((c) => c.name).join(', ');
  const described = z.string().optional().describe(`a read-only context repository to read instead of the job's own: ${names}`);
  // Typed as always there, so the tools read it alike; without context repositories the schema leaves it out.
  return (context.length ? { repository: described } : {}) as { repository: typeof described };
}

/**
 * The agent's file tools, every path confined to the clone at root (see CloneFs); list, read and search also reach
 * the job's read-only context repositories by their `repository` argument, which write, edit and delete refuse.
 */
export function workspaceTools(root: string, limits: ToolLimits = defaultToolLimits, owner?: FileOwner, context: ContextClone[] = []) {
  const clone = new CloneFs(root, { owner });
  const readable = new Map(context.map((c) => [c.name, new CloneFs(c.root)]));
  const repoArg = repositoryArgument(context);
  /** The clone a read goes to; a name that is no context repository is the model's mistake, told as a refusal. */
  const source = (repository: string | undefined): CloneFs => {
    if (repository === undefined || repository === '') return clone;
    const found = readable.get(repository);
    if (!found)
      throw new PathRefused(`"${repository}" is not one of this job's context repositories${context.length ? ` (${[...readable.keys()].join(', ')})` : ''}; leave out repository for the job's own`);
    return found;
  };
  /** Writes go to the job's clone only: a context repository is read-only, and nothing there is ever committed. */
  const writable = (repository: string | undefined): void => {
    if (repository === undefined || repository === '') return;
    source(repository);
    throw new PathRefused(`"${repository}" is a read-only context repository: nothing there may be written or deleted; leave out repository to change the job's own`);
  };
  return {
    list_files: tool({
      description: `List files under a folder of the repository (default: the whole repository), up to ${listCap}.`,
      inputSchema: z.object({ folder: z.string().optional().describe('folder relative to the repository root'), ...repoArg }),
      execute: async ({ folder, repository }) => {
        try {
          return { files: await source(repository).listFiles(folder && folder !== '.' ? folder : undefined, listCap) };
        } catch (err) {
          return failure(err, 'the operation failed');
        }
      },
    }),
    read_file: tool({
      description: 'Read a text file of the repository.',
      inputSchema: z.object({ path: z.string(), ...repoArg }),
      execute: async ({ path: p, repository }) => {
        try {
          return { content: (await source(repository).readFile(p, limits.maxReadBytes)).toString('utf8') };
        } catch (err) {
          return failure(err, `cannot read ${p}: no such file`);
        }
      },
    }),
    search_files: tool({
      description: `Find lines containing a text (case-insensitive) across the repository; up to ${maxMatches} matches.`,
      inputSchema: z.object({ text: z.string().min(1).max(200), ...repoArg }),
      execute: async ({ text, repository }) => {
        try {
          return { matches: await searchFiles(source(repository), text, limits.maxReadBytes) };
        } catch (err) {
          return failure(err, 'the operation failed');
        }
      },
    }),
    write_file: tool({
      description: 'Create or replace a text file of the repository with the given content.',
      inputSchema: z.object({ path: z.string(), content: z.string(), ...repoArg }),
      execute: async ({ path: p, content, repository }) => {
        try {
          writable(repository);
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
      inputSchema: z.object({ path: z.string(), old: z.string().min(1), new: z.string(), ...repoArg }),
      execute: async ({ path: p, old, new: replacement, repository }) => {
        try {
          writable(repository);
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
      inputSchema: z.object({ path: z.string(), ...repoArg }),
      execute: async ({ path: p, repository }) => {
        try {
          writable(repository);
          await clone.removeFile(p);
          return { deleted: p };
        } catch (err) {
          return failure(err, `cannot delete ${p}: no such file`);
        }
      },
    }),
  };
}

/** The agent's `run_command` tool: a shell command in the turn's sandbox, never on the worker itself. */
export function commandTool(run: (command: string) => Promise<CommandResult>) {
  return {
    run_command: tool({
      description:
        'Run a shell command (/bin/sh -c) in the repository root, inside a sandbox: only the repository is writable, there are no ' +
        'secrets, and there is no network unless the project allows it. Use it to run tests, linters and builds and fix what fails. ' +
        'Returns the exit code and the beginning and end of the output.',
      inputSchema: z.object({ command: z.string().min(1).max(8192).describe('the shell command, e.g. "npm test"') }),
      execute: async ({ command }) => {
        const r = await run(command);
        return { exitCode: r.exitCode, output: r.output, ...(r.stoppedBy ? { stoppedBy: r.stoppedBy } : {}) };
      },
    }),
  };
}

/** The model's tools with every result redacted: a file setup wrote may hold a secret the agent then reads. */
export function redactToolResults<T extends Record<string, Tool>>(tools: T, redact: Redact): T {
  const wrapped = Object.entries(tools).map(([name, t]) => {
    const execute = t.execute;
    return [name, execute ? { ...t, execute: async (...args: Parameters<typeof execute>) => redactDeep(await execute(...args), redact) } : t];
  });
  return Object.fromEntries(wrapped) as T;
}
