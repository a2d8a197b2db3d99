import type { ProjectInstructionsRecord } from '../../src/jobs/job-turns';
import { CloneFs, PathRefused } from './clone-fs';
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

const absent = (err: unknown) => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');

/** Text of at most maxBytes, never ending in half a character. */
function utf8Head(bytes: Buffer): string {
  return bytes.toString('utf8').replace(/\uFFFD$/, '');
}

/**
 * The repository's own instructions for agents, read through CloneFs (the repository is untrusted: a link out of the
 * clone, a FIFO or a folder is refused, a huge file is read only up to the bound). A refused `.docent/AGENTS.md`
 * leaves the place to `AGENTS.md`; the refusal is recorded when neither could be used.
 */
export async function readProjectInstructions(files: CloneFs): Promise<ProjectInstructions> {
  let refused: ProjectInstructionsRecord | undefined;
  for (const file of candidates) {
    const head = await files.readHead(file, maxProjectInstructionBytes).catch((err: unknown) => {
      if (err instanceof PathRefused) refused ??= { path: file, refused: err.message };
      else if (!absent(err)) refused ??= { path: file, refused: 'not a regular file' };
      return null;
    });
    if (head === null) continue;
    const truncated = head.size > maxProjectInstructionBytes;
    const note = truncated ? `\n\n[${file} is ${head.size} bytes; only its first ${maxProjectInstructionBytes} bytes are shown]` : '';
    const prompt = `The repository's own instructions for agents, from ${file} (follow them where they do not conflict with the instruction):\n\n${utf8Head(head.bytes)}${note}`;
    return { prompt, record: { path: file, bytes: head.size, truncated } };
  }
  return refused ? { prompt: '', record: refused } : { prompt: '' };
}

/** The system prompt of a turn in the clone at root: docent's own, then the repository's instructions, which the turn's record names. */
export async function turnSystemPrompt(own: string, root: string, journal: TurnJournal | undefined, jobId: string, turn: number): Promise<string> {
  const { prompt, record } = await readProjectInstructions(new CloneFs(root));
  if (record) await journal?.ledger.recordProjectInstructions(jobId, turn, record);
  return prompt ? `${own}\n\n${prompt}` : own;
}
