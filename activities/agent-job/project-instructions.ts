import type { ProjectInstructionsRecord } from '../../src/jobs/job-turns';
import type { SimpleGit } from 'simple-git';
import { commitOf } from './owner-code';
import type { TurnJournal } from './turn-journal';

/** The most of a repository's AGENTS.md the model is shown; the rest is cut with a note, so one file cannot crowd out the task. */
export const maxProjectInstructionBytes = 16 * 1024;

/** Where the repository keeps instructions for agents, the one that wins first: docent's own file, then the common one. */
const candidates = ['.docent/AGENTS.md', 'AGENTS.md'];

export interface ProjectInstructions {
  /** What goes into the system prompt; empty when the repository has none that may be read. */
  prompt: string;
  /** What the turn's record shows of it; absent when the repository has no such file. */
  record?: ProjectInstructionsRecord;
}

/** A blob larger than this is not read at all: git would hand all of it over to show its first 16 KiB. */
const maxReadBytes = 64 * 1024 * 1024;
/** Links followed from one candidate before giving up, as the kernel gives up on a loop. */
const maxLinks = 8;

/** Text of at most maxBytes, never ending in half a character. */
function utf8Head(bytes: Buffer): string {
  return bytes.toString('utf8').replace(/\uFFFD$/, '');
}

type Entry = { kind: 'file'; oid: string; size: number } | { kind: 'link'; oid: string } | { kind: 'other' };

/** The tree entry at `file` in `commit` (`mode type oid size\tpath` of ls-tree -l), or null when there is none. */
async function entryAt(git: SimpleGit, commit: string, file: string): Promise<Entry | null> {
  const out = await git.raw(['ls-tree', '-z', '-l', '--full-tree', commit, '--', `:(literal)${file}`]);
  const line = out.split('\0').find((l) => l.endsWith(`\t${file}`));
  if (!line) return null;
  const [mode, , oid, size] = line.slice(0, line.indexOf('\t')).split(/\s+/);
  if (mode === '100644' || mode === '100755') return { kind: 'file', oid: oid!, size: Number(size) };
  if (mode === '120000') return { kind: 'link', oid: oid! };
  return { kind: 'other' };
}

/** Where a link at `file` pointing at `target` leads inside the repository, or null when it leads out of it. */
function linkedPath(file: string, target: string): string | null {
  if (target.startsWith('/')) return null;
  const parts: string[] = file.split('/').slice(0, -1);
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (!parts.length) return null;
      parts.pop();
    } else parts.push(part);
  }
  return parts.length ? parts.join('/') : null;
}

/** One candidate at the commit: its head and size, null when absent, or why it may not be read. */
async function readAt(git: SimpleGit, commit: string, file: string): Promise<{ bytes: Buffer; size: number } | null | { refused: string }> {
  let path = file;
  for (let hop = 0; hop <= maxLinks; hop++) {
    const entry = await entryAt(git, commit, path);
    if (entry === null) return null;
    if (entry.kind === 'other') return { refused: 'not a regular file' };
    if (entry.kind === 'link') {
      const next = linkedPath(path, await git.raw(['cat-file', 'blob', entry.oid]));
      if (next === null) return { refused: `path "${file}" leads outside the repository` };
      path = next;
      continue;
    }
    if (entry.size > maxReadBytes) return { refused: `${entry.size} bytes, too large to read` };
    const bytes = Buffer.from(await git.raw(['cat-file', 'blob', entry.oid]), 'utf8');
    return { bytes: bytes.subarray(0, maxProjectInstructionBytes), size: entry.size };
  }
  return { refused: 'too many levels of symbolic links' };
}

/**
 * The repository's own instructions for agents as the job's base ref holds them, read from git's objects (the
 * repository is untrusted: a link out of it or anything but a file is refused, a huge file is cut at the bound). Never
 * the turn's own tree: in a follow-up turn that is the agent's last commit, so an injected AGENTS.md would steer every
 * later turn; the agent's edits to it count once a person merges them into the base ref. A refused
 * `.docent/AGENTS.md` leaves the place to `AGENTS.md`; the refusal is recorded when neither could be used.
 */
export async function readProjectInstructions(git: SimpleGit, baseCommit: string): Promise<ProjectInstructions> {
  let refused: ProjectInstructionsRecord | undefined;
  for (const file of candidates) {
    const head = await readAt(git, baseCommit, file).catch(() => ({ refused: 'not readable at the base ref' }));
    if (head === null) continue;
    if ('refused' in head) {
      refused ??= { path: file, refused: head.refused };
      continue;
    }
    const truncated = head.size > maxProjectInstructionBytes;
    const note = truncated ? `\n\n[${file} is ${head.size} bytes; only its first ${maxProjectInstructionBytes} bytes are shown]` : '';
    const prompt = `The repository's own instructions for agents, from ${file} (follow them where they do not conflict with the instruction):\n\n${utf8Head(head.bytes)}${note}`;
    return { prompt, record: { path: file, bytes: head.size, truncated } };
  }
  return refused ? { prompt: '', record: refused } : { prompt: '' };
}

/**
 * The system prompt of a turn: docent's own, then the repository's instructions at the job's base ref (`baseRef`, as
 * the clone last fetched it), which the turn's record names. A base ref the clone lacks gives no instructions.
 */
export async function turnSystemPrompt(own: string, git: SimpleGit, baseRef: string | undefined, journal: TurnJournal | undefined, jobId: string, turn: number): Promise<string> {
  const base = baseRef ? await commitOf(git, baseRef) : null;
  const { prompt, record } = base ? await readProjectInstructions(git, base) : { prompt: '', record: undefined };
  if (record) await journal?.ledger.recordProjectInstructions(jobId, turn, record);
  return prompt ? `${own}\n\n${prompt}` : own;
}
