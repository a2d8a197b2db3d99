import { maxPromptChars } from '../agent/validation';

/** Marks docent's own answers, so an answer is never read as an instruction and a retried answer is found. */
export const answerMarker = (jobId: string, turn: number, attempt = 1) => `<!-- docent:answer job=${jobId} turn=${turn}${attempt > 1 ? ` attempt=${attempt}` : ''} -->`;
export const isDocentAnswer = (body: string) => body.includes('<!-- docent:answer ');

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether `body` mentions `@handle` as GitHub would link it (not inside an e-mail address, another handle or a quoted reply). */
export function mentions(body: string, handle: string): boolean {
  const mention = new RegExp(`(^|[^A-Za-z0-9_.@/-])@${escapeRegExp(handle)}(?![A-Za-z0-9_-])`, 'i');
  // A quoted reply ("> @docent …") repeats someone else's instruction.
  const ownLines = body
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('>'))
    .join('\n');
  return mention.test(ownLines);
}

/** Where a review comment was made: its file, line and the diff hunk GitHub shows above it. */
export interface ReviewLocation {
  path: string;
  line: number | null;
  diffHunk: string;
}

/** The diff hunk's last lines are the ones the comment is on; earlier ones are cut first. */
const maxHunkChars = 4096;

function hunkTail(hunk: string): string {
  if (hunk.length <= maxHunkChars) return hunk;
  const tail = hunk.slice(-maxHunkChars);
  return tail.slice(tail.indexOf('\n') + 1);
}

/** The instruction a comment gives: its text, and for a review comment where it was made; null when it is too long. */
export function commentPrompt(body: string, location?: ReviewLocation): string | null {
  const text = body.trim();
  const prompt = location
    ? `Review comment on ${location.path}${location.line !== null ? ` line ${location.line}` : ''}:\n${text}\n\nThe diff hunk it was made on:\n\`\`\`diff\n${hunkTail(location.diffHunk)}\n\`\`\``
    : text;
  return prompt.length <= maxPromptChars ? prompt : null;
}

/** Keeps text docent writes from notifying anyone (or itself): `@name` loses its link. */
export const withoutMentions = (text: string) => text.replace(/@(?=[A-Za-z0-9])/g, '@\u200b');

/** Marks docent's notices (archived, refused) the same way as its answers. */
export const noticeMarker = (jobId: string) => `<!-- docent:answer job=${jobId} notice -->`;
