import { enc } from '../api.js';
import { h } from '../dom.js';

/** Reads the assistant's v2 answer stream (server-sent events of the AI SDK's UI message stream) into text and sources. */
async function* answerParts(res) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += value;
    const lines = buffered.split('\n');
    buffered = lines.pop();
    for (const line of lines) {
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      yield JSON.parse(line.slice(6));
    }
  }
}

/**
 * The Ask box: a question to the project's docs assistant, as a reader would ask it, with an assistant key typed for
 * the question (the console's session is not an assistant key). The key stays in the field; nothing stores it.
 */
export function askBox(domain) {
  const answer = h('div', { class: 'plan', 'data-testid': 'ask-answer', 'aria-live': 'polite' });
  const sources = h('ul', { 'data-testid': 'ask-sources' });
  const passages = h('ol', { 'data-testid': 'ask-passages' });
  const error = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    { class: 'box', 'aria-labelledby': 'ask-title' },
    h('h2', { id: 'ask-title' }, `Ask ${domain}`),
    h('label', {}, h('span', {}, 'Assistant key (used for this question, not stored)'), h('input', { type: 'password', name: 'assistantKey', autocomplete: 'off', required: true })),
    h('label', {}, h('span', {}, 'Question'), h('input', { type: 'text', name: 'question', required: true })),
    h('button', { type: 'submit' }, 'Ask'),
    error,
    answer,
    sources,
    h('h3', {}, 'Passages the search retrieves for this question, with their scores'),
    passages,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    answer.textContent = '';
    sources.replaceChildren();
    passages.replaceChildren();
    const key = form.elements.namedItem('assistantKey').value.trim();
    const text = form.elements.namedItem('question').value;
    try {
      const res = await fetch(`/discovery/v2/assistant/${enc(domain)}/message`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ fp: 'console', messages: [{ id: 'q1', role: 'user', parts: [{ type: 'text', text }] }] }),
      });
      if (!res.ok) throw new Error((await res.json().catch(() => ({}))).error ?? `HTTP ${res.status}`);
      for await (const part of answerParts(res)) {
        if (part.type === 'text-delta') answer.append(part.delta);
        if (part.type === 'source-url') sources.append(h('li', {}, h('a', { href: part.url }, part.title ?? part.url)));
        if (part.type === 'error') throw new Error(part.errorText ?? 'the answer failed');
      }
      // The same question to the search the answer retrieves through: each passage with its score (0..1, against the best).
      const found = await fetch(`/discovery/v1/search/${enc(domain)}/results`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: text, pageSize: 5 }),
      });
      if (!found.ok) throw new Error((await found.json().catch(() => ({}))).error ?? `HTTP ${found.status}`);
      for (const r of (await found.json()).results) {
        passages.append(
          h(
            'li',
            {},
            h('p', {}, h('strong', {}, r.score.toFixed(2)), ` ${r.title}${r.headings.length ? ` › ${r.headings.join(' › ')}` : ''} (${r.path})`),
            h('p', { class: 'muted' }, r.content.slice(0, 300)),
          ),
        );
      }
    } catch (err) {
      error.textContent = err.message;
    }
  });
  return form;
}
