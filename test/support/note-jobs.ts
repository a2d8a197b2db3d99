import type { ChatRequest, ScriptedTurn } from './scripted-model';

const lastUser = (req: ChatRequest) => JSON.stringify(req.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');

/**
 * A scripted model for jobs that each write their own note (`write note <n>`, committed as notes/<n>.md); the first
 * call of a `slow note <n>` job stalls for a minute, so a test can kill or stop its worker while the step runs.
 * `stalled` says which notes' calls have stalled.
 */
export function noteJobs(): { script: (req: ChatRequest) => ScriptedTurn; stalled: ReadonlySet<string> } {
  const stalled = new Set<string>();
  const script = (req: ChatRequest): ScriptedTurn => {
    const n = /note (\w+)/.exec(lastUser(req))?.[1] ?? 'x';
    if (req.messages.at(-1)?.role === 'tool') return { text: `Add note ${n}\n\nA note.` };
    const slow = lastUser(req).includes('slow note') && !stalled.has(n);
    if (slow) stalled.add(n);
    return { toolCalls: [{ name: 'write_file', args: { path: `notes/${n}.md`, content: `note ${n}\n` } }], firstChunkDelayMs: slow ? 60_000 : 0 };
  };
  return { script, stalled };
}
