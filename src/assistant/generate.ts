import { streamText, type LanguageModel, type ModelMessage } from 'ai';
import { AppError } from '../errors';
import type { Passage } from '../search/docs-index';
import type { AnswerEvent } from './events';
import type { ChatTurn, ContextItem } from './request';

export interface GenerationInput {
  domain: string;
  question: string;
  history: ChatTurn[];
  passages: Passage[];
  context: ContextItem[];
  signal?: AbortSignal;
}

/** How long a model may take to start its answer, and to go silent once it has started (config.assistant). */
export interface ModelPatience {
  firstChunkMs: number;
  chunkGapMs: number;
}

/** `npm-ci › Configuration › omit`: the page title and the passage's heading trail. */
export const passageTitle = (p: Pick<Passage, 'title' | 'headings'>) => [p.title, ...p.headings].join(' › ');

/** The instructions and the numbered passages; the model may answer only from them and cites them as [n]. */
export function buildSystemPrompt(input: Pick<GenerationInput, 'domain' | 'passages' | 'context'>): string {
  const passages = input.passages.map((p, i) => `[${i + 1}] ${passageTitle(p)} (${p.url})\n${p.content}`).join('\n\n');
  const selection = input.context.length
    ? `\n\nThe user has selected this on the page (use it to understand the question; it is not documentation):\n` +
      input.context.map((c) => `<selection type="${c.type ?? 'textSelection'}"${c.path ? ` path="${c.path}"` : ''}>\n${c.value}\n</selection>`).join('\n')
    : '';
  return (
    [
      `You are the documentation assistant for ${input.domain}.`,
      'Answer the user only from the numbered documentation passages below. Do not use other knowledge.',
      'After each statement, cite the passage(s) it comes from as [n]. Never cite a passage that does not support the statement.',
      'If the passages do not answer the question, say that the documentation does not cover it, and suggest what to search for.',
      'Be concise; use Markdown; quote commands and options exactly as the passages write them.',
      '',
      'Passages:',
      passages || '(none were found)',
    ].join('\n') + selection
  );
}

/**
 * Streams the model's answer; a provider failure surfaces as a thrown error, which the encoders put in-stream. A model
 * that has sent no text `patience.firstChunkMs` after the call (headers included), or none for `patience.chunkGapMs`
 * mid-answer, is cancelled and surfaces as `unavailable`: the reader gets an error event, not a stream that never ends.
 */
export async function* generateAnswer(model: LanguageModel, input: GenerationInput, patience: ModelPatience): AsyncGenerator<AnswerEvent> {
  const messages: ModelMessage[] = [...input.history.map((t) => ({ role: t.role, content: t.text })), { role: 'user', content: input.question }];
  const stalled = new AbortController();
  let started = false;
  let timer = setTimeout(() => stalled.abort(), patience.firstChunkMs);
  const abortSignal = input.signal ? AbortSignal.any([input.signal, stalled.signal]) : stalled.signal;
  // Errors arrive as 'error' parts and are rethrown below; the default onError would print them to the console.
  const result = streamText({ model, system: buildSystemPrompt(input), messages, abortSignal, maxRetries: 1, onError: () => undefined });
  const stallError = () => {
    const seconds = Math.round((started ? patience.chunkGapMs : patience.firstChunkMs) / 1000);
    return new AppError(
      'unavailable',
      started ? `the model stopped answering mid-answer (no output for ${seconds} s); ask again` : `the model did not start answering within ${seconds} s; ask again`,
      5,
    );
  };
  try {
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') {
        // The first text swaps the start bound for the gap bound; later ones restart it in place (no timer per token).
        if (started) timer.refresh();
        else {
          started = true;
          clearTimeout(timer);
          timer = setTimeout(() => stalled.abort(), patience.chunkGapMs);
        }
        yield { type: 'text', delta: part.text };
      } else if (part.type === 'error') throw part.error;
      else if (part.type === 'finish') {
        const reason = part.finishReason;
        yield {
          type: 'finish',
          finishReason: reason === 'stop' || reason === 'length' || reason === 'content-filter' || reason === 'error' ? reason : 'other',
          usage: { promptTokens: part.totalUsage.inputTokens ?? 0, completionTokens: part.totalUsage.outputTokens ?? 0 },
        };
      }
    }
  } catch (err) {
    // A reader who hung up aborted the call too: only docent's own bound is a stall.
    throw stalled.signal.aborted && !input.signal?.aborted ? stallError() : err;
  } finally {
    clearTimeout(timer);
  }
  // A stall can also end the SDK's stream quietly, with an 'abort' part.
  if (stalled.signal.aborted && !input.signal?.aborted) throw stallError();
}

/** Unicode's sentence rules: a dot inside `plan.approved` or `agent-job.ts` ends no sentence. */
const sentences = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * The passage's opening sentences, whole, up to `maxChars`: never a cut inside a sentence, so a cited passage never
 * starts or stops mid-word; a first sentence longer than that is cut at a word, with an ellipsis.
 */
export function firstSentences(text: string, maxChars: number): string {
  const flat = text
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  let out = '';
  for (const { segment } of sentences.segment(flat)) {
    if (out && out.length + segment.length > maxChars) break;
    out += segment;
  }
  out = out.trim();
  if (out.length <= maxChars) return out;
  const cut = out.slice(0, maxChars);
  const space = cut.lastIndexOf(' ');
  return `${(space > 0 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The offline answer: the opening sentences of the best passages, each cited, streamed word by word. */
export async function* extractiveAnswer(input: Pick<GenerationInput, 'passages'>, maxPassages = 3): AsyncGenerator<AnswerEvent> {
  const top = input.passages.slice(0, maxPassages);
  const text = top.length
    ? `Here is what the documentation says:\n\n` + top.map((p, i) => `- **${passageTitle(p)}**: ${firstSentences(p.content, 320)} [${i + 1}]`).join('\n') + '\n'
    : 'I could not find this in the documentation. Try different words, or a broader question.';
  for (const piece of text.match(/\S+\s*|\s+/g) ?? []) yield { type: 'text', delta: piece };
  yield { type: 'finish', finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } };
}
