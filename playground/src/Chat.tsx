import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, type UIMessage } from 'ai';
import { useState, type RefObject } from 'react';
import { Markdown } from './Markdown';
import type { Settings } from './settings';

type DocsMessage = UIMessage<{ threadId?: string }>;

/** The thread of the conversation so far: the finish event of each answer carries it as message metadata. */
const threadOf = (messages: DocsMessage[]) => messages.findLast((m) => m.role === 'assistant' && m.metadata?.threadId)?.metadata?.threadId;

function transportFor(settings: RefObject<Settings>) {
  return new DefaultChatTransport<DocsMessage>({
    prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => {
      const s = settings.current;
      return {
        api: `${s.apiUrl}/discovery/v2/assistant/${encodeURIComponent(s.domain)}/message`,
        headers: { authorization: `Bearer ${s.assistantKey}` },
        body: { id, trigger, messageId, fp: 'anonymous', messages, threadId: threadOf(messages) },
      };
    },
  });
}

/** The message's sources in the order the stream numbered them. */
const sourcesOf = (m: DocsMessage) => m.parts.flatMap((p) => (p.type === 'source-url' ? [p] : []));

export function Chat({ settings }: { settings: RefObject<Settings> }) {
  const [transport] = useState(() => transportFor(settings));
  const { messages, sendMessage, status, error } = useChat<DocsMessage>({ transport });
  const [input, setInput] = useState('');
  const busy = status === 'submitted' || status === 'streaming';
  const threadId = threadOf(messages);
  return (
    <section className="chat" aria-label="Docs chat">
      <h2>Ask the docs</h2>
      <ol className="messages">
        {messages.map((m) => (
          <li key={m.id} className={m.role} data-role={m.role}>
            {m.role === 'assistant' ? (
              <Markdown text={m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')} sources={(n) => (n >= 1 && n <= sourcesOf(m).length ? `${m.id}-source-${n}` : undefined)} />
            ) : (
              <p className="text">{m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')}</p>
            )}
            <ol className="sources">
              {sourcesOf(m).map((p, i) => (
                <li key={p.sourceId} id={`${m.id}-source-${i + 1}`}>
                  <a href={p.url} target="_blank" rel="noreferrer">
                    {p.title ?? p.url}
                  </a>
                </li>
              ))}
            </ol>
          </li>
        ))}
      </ol>
      {error && (
        <p role="alert" className="error">
          {error.message}
        </p>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!input.trim() || busy) return;
          void sendMessage({ text: input });
          setInput('');
        }}
      >
        <input name="question" aria-label="Question" placeholder="Ask a question about the docs" value={input} onChange={(e) => setInput(e.target.value)} />
        <button type="submit" disabled={busy}>
          Ask
        </button>
      </form>
      <p className="meta">
        <span data-testid="chat-status">{status}</span>
        {threadId && (
          <>
            {' '}
            · thread <code data-testid="thread-id">{threadId}</code>
          </>
        )}
      </p>
    </section>
  );
}
