// Entry point of the scripted model as its own process, so that its event loop does not share the gateway's.
// The reply is read from the last user message: `[tokens=N delay=D first=F]` (defaults 20, 0, 0); a request
// with tools (an agent job) gets one write_file call and then a title and summary, each after `[latency=L]` ms
// when the job's instruction carries that marker (default 0); with `[unchanged]` it makes no tool call and says nothing needs changing.
import { startScriptedModel, type ChatRequest, type ScriptedTurn } from '../../test/support/scripted-model';

const textOf = (content: unknown): string => (typeof content === 'string' ? content : Array.isArray(content) ? content.map((p: { text?: string }) => p.text ?? '').join('') : '');

function reply(req: ChatRequest): ScriptedTurn {
  if (req.tools?.length) {
    const instruction = textOf(req.messages.find((m) => m.role === 'user')?.content);
    const firstChunkDelayMs = Number(/\[latency=(\d+)\]/.exec(instruction)?.[1] ?? 0);
    if (instruction.includes('[unchanged]')) return { text: 'No change needed\n\nThe repository already does this.', firstChunkDelayMs };
    if (req.messages.at(-1)?.role === 'tool') return { text: 'Add NOTES.md\n\nA benchmark note.', firstChunkDelayMs };
    return { toolCalls: [{ name: 'write_file', args: { path: 'NOTES.md', content: 'benchmark\n' } }], firstChunkDelayMs };
  }
  const user = textOf(req.messages.filter((m) => m.role === 'user').at(-1)?.content);
  const spec = /\[tokens=(\d+) delay=(\d+) first=(\d+)\]/.exec(user);
  const [tokens, delay, first] = spec ? [Number(spec[1]), Number(spec[2]), Number(spec[3])] : [20, 0, 0];
  return { text: Array.from({ length: tokens }, (_, i) => `w${i} `), chunkDelayMs: delay, firstChunkDelayMs: first };
}

void startScriptedModel(reply).then((m) => {
  process.stdout.write(JSON.stringify({ baseUrl: m.baseUrl, apiKey: m.apiKey, modelId: m.modelId }) + '\n');
  process.on('SIGTERM', () => void m.close().then(() => process.exit(0)));
});
