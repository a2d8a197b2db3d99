import type { ChatTurn } from './request';

// Role and framing a provider adds around each message, in tokens; small, but it keeps many tiny turns honest.
const perMessageTokens = 4;

/**
 * A cheap, deliberately generous token estimate: one token per 3 UTF-8 bytes. English runs about 4 bytes per token in
 * GPT-style and Claude tokenizers, so it over-counts there; CJK text is 3 bytes per character and about a token each.
 * Counting bytes costs nothing on the event loop, unlike running a tokenizer over a long history per request.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 3);
}

/**
 * The most recent turns whose estimate fits `maxTokens`, oldest first. Older turns are dropped whole, never cut in the
 * middle, and the kept history starts with a user turn, as some providers require.
 */
export function trimHistory(history: readonly ChatTurn[], maxTokens: number): ChatTurn[] {
  let used = 0;
  let start = history.length;
  while (start > 0) {
    const cost = estimateTokens(history[start - 1]!.text) + perMessageTokens;
    if (used + cost > maxTokens) break;
    used += cost;
    start--;
  }
  while (start < history.length && history[start]!.role !== 'user') start++;
  return history.slice(start);
}
