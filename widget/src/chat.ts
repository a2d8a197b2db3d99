import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import type { WidgetSettings } from './settings';

/**
 * An answer's start event carries its searchId and its finish event the thread id, as message metadata; each source
 * carries its page path in `providerMetadata.docent.path` (src/assistant/ui-message-stream.ts).
 */
export type DocsMessage = UIMessage<{ threadId?: string; searchId?: string }>;

interface Saved {
  threadId?: string;
  messages: DocsMessage[];
}

/** The client's earlier turns only matter for a thread docent does not know yet; the last few are enough. */
const sentMessages = 20;

const storageKey = (domain: string) => `docent-assistant:${domain}`;

/** sessionStorage, or nothing where the page may not use it (sandboxed frames, some privacy modes). */
function tabStorage(): Storage | undefined {
  try {
    return window.sessionStorage;
  } catch {
    return undefined;
  }
}

/**
 * One conversation with the assistant, kept per tab: the thread id and the messages live in sessionStorage, so the
 * reader keeps the thread while moving between docs pages, and a new tab starts afresh.
 */
export class Conversation {
  messages: DocsMessage[] = [];
  threadId: string | undefined;
  private readonly transport: DefaultChatTransport<DocsMessage>;
  private readonly storage = tabStorage();

  constructor(private readonly s: WidgetSettings) {
    this.restore();
    this.transport = new DefaultChatTransport<DocsMessage>({
      api: `${s.apiUrl}/discovery/v2/assistant/${encodeURIComponent(s.domain)}/message`,
      headers: { authorization: `Bearer ${s.apiKey}` },
      prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({
        body: {
          id,
          trigger,
          messageId,
          fp: 'anonymous',
          messages: messages.slice(-sentMessages),
          threadId: this.threadId,
          currentPath: location.pathname.slice(0, 200),
          ...(Object.keys(s.filter).length ? { filter: s.filter } : {}),
        },
      }),
    });
  }

  /** Sends a question and streams the answer into `messages`, calling `onUpdate` on every change. */
  async ask(text: string, onUpdate: () => void): Promise<void> {
    this.messages = [...this.messages, { id: crypto.randomUUID(), role: 'user', parts: [{ type: 'text', text }] }];
    onUpdate();
    try {
      const stream = await this.transport.sendMessages({ chatId: this.threadId ?? 'new', messages: this.messages, abortSignal: undefined, trigger: 'submit-message', messageId: undefined });
      const before = this.messages;
      for await (const answer of readUIMessageStream<DocsMessage>({ stream, terminateOnError: true })) {
        this.messages = [...before, answer];
        this.threadId = answer.metadata?.threadId ?? this.threadId;
        onUpdate();
      }
    } finally {
      this.save();
    }
  }

  /** Stores a rating (and a comment) on an answer's turn. */
  async rate(messageId: string, rating: 'up' | 'down', comment?: string): Promise<void> {
    const r = await fetch(`${this.s.apiUrl}/discovery/v1/assistant/${encodeURIComponent(this.s.domain)}/feedback`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.s.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ threadId: this.threadId, messageId, rating, ...(comment ? { comment } : {}) }),
    });
    if (!r.ok) throw Object.assign(new Error(await r.text()), { statusCode: r.status, responseBody: '' });
  }

  /**
   * Reports that the reader opened a cited source of an answer (search analytics). A beacon cannot carry the key, so
   * a keepalive fetch: it outlives the page, never delays the navigation, and a failure is only a lost click.
   */
  reportClick(m: DocsMessage, sourceId: string): void {
    const source = m.parts.find((p) => p.type === 'source-url' && p.sourceId === sourceId);
    const path = source?.type === 'source-url' ? source.providerMetadata?.docent?.path : undefined;
    const searchId = m.metadata?.searchId;
    if (typeof path !== 'string' || typeof searchId !== 'string') return;
    fetch(`${this.s.apiUrl}/discovery/v1/search/${encodeURIComponent(this.s.domain)}/click`, {
      method: 'POST',
      keepalive: true,
      headers: { authorization: `Bearer ${this.s.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ searchId, path }),
    }).catch(() => undefined);
  }

  reset(): void {
    this.messages = [];
    this.threadId = undefined;
    this.storage?.removeItem(storageKey(this.s.domain));
  }

  private restore(): void {
    try {
      const saved = JSON.parse(this.storage?.getItem(storageKey(this.s.domain)) ?? 'null') as Saved | null;
      if (saved && Array.isArray(saved.messages)) {
        this.messages = saved.messages;
        this.threadId = typeof saved.threadId === 'string' ? saved.threadId : undefined;
      }
    } catch {
      this.storage?.removeItem(storageKey(this.s.domain));
    }
  }

  private save(): void {
    const saved: Saved = { threadId: this.threadId, messages: this.messages.slice(-40) };
    try {
      this.storage?.setItem(storageKey(this.s.domain), JSON.stringify(saved));
    } catch {
      // A full storage only costs the conversation after a page change.
    }
  }
}

/**
 * What went wrong, in words a reader (or the site's owner) can act on. A refused origin is a failed preflight, which
 * a page cannot read: the public origin check of the domain tells it apart from a network failure.
 */
export async function explainFailure(err: unknown, s: WidgetSettings): Promise<string> {
  const status = (err as { statusCode?: number }).statusCode;
  if (typeof status === 'number') {
    const body = (err as { responseBody?: string; message?: string }).responseBody || (err as Error).message;
    let detail = '';
    try {
      detail = String((JSON.parse(body) as { error?: unknown }).error ?? '');
    } catch {
      detail = '';
    }
    if (status === 401) return 'This site’s assistant key is not valid. The site’s owner needs to check data-key.';
    if (status === 429) return `Too many questions right now. ${detail || 'Try again in a moment.'}`;
    return detail || `The assistant answered with an error (HTTP ${status}).`;
  }
  if (err instanceof Error && err.name !== 'TypeError') return err.message;
  const allowed = await fetch(`${s.apiUrl}/discovery/v1/assistant/${encodeURIComponent(s.domain)}/origin`)
    .then(async (r) => (r.ok ? ((await r.json()) as { allowed?: boolean }).allowed : undefined))
    .catch(() => undefined);
  if (allowed === false) {
    return `This site (${location.origin}) may not use the assistant of ${s.domain}: its origin is not among the project’s allowed origins. The docs team can add it.`;
  }
  return 'Could not reach the assistant. Check your connection and try again.';
}
