import type { SourceUrlUIPart } from 'ai';
import { Conversation, explainFailure, type DocsMessage } from './chat';
import { linkCitations, renderMarkdown } from './markdown';
import { readSettings, settingAttributes, type WidgetSettings } from './settings';
import styles from './styles.css?inline';

type Status = 'ready' | 'submitted' | 'streaming' | 'error';

/** Builds an element with attributes and children; text always goes in as text. */
function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...children);
  return el;
}

const textOf = (m: DocsMessage) => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
const sourcesOf = (m: DocsMessage) => m.parts.filter((p): p is SourceUrlUIPart => p.type === 'source-url');
const isMac = () => /Mac|iPhone|iPad/.test(navigator.platform);

let sheet: CSSStyleSheet | undefined;
/** One stylesheet object for every instance on the page. */
function sharedSheet(): CSSStyleSheet {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(styles);
  }
  return sheet;
}

/**
 * `<docent-assistant>`: an "Ask AI" button and a chat panel over the docs, in an open shadow root. The panel is a
 * modal `<dialog>`: the browser keeps focus inside it and closes it on Esc; Ctrl/Cmd+K opens it from anywhere.
 */
export class DocentAssistant extends HTMLElement {
  static observedAttributes = [...settingAttributes];
  private settings!: WidgetSettings;
  private conversation!: Conversation;
  private status: Status = 'ready';
  private rendered = new Map<string, { key: string; el: HTMLElement }>();
  private readonly root = this.attachShadow({ mode: 'open' });
  private readonly dialog = h('dialog', { 'aria-labelledby': 'docent-title', part: 'panel' });
  private readonly log = h('div', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' });
  private readonly error = h('p', { class: 'error', role: 'alert', hidden: '' });
  private readonly statusText = h('p', { class: 'status', role: 'status' });
  private readonly input = h('textarea', { name: 'question', rows: '1', placeholder: 'Ask a question about the docs', 'aria-label': 'Your question', maxlength: '4000' });
  private readonly send = h('button', { type: 'submit', class: 'send', 'aria-label': 'Send question' }, 'Send');
  private readonly starters = h('ul', { class: 'starters', 'aria-label': 'Suggested questions' });
  private readonly launcher = h('button', { type: 'button', class: 'launcher', part: 'launcher', 'aria-haspopup': 'dialog', 'aria-keyshortcuts': 'Control+K Meta+K' });
  private readonly heading = h('h2', { id: 'docent-title' });
  private readonly onKey = (e: KeyboardEvent) => {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'k') {
      e.preventDefault();
      if (this.dialog.open) this.close();
      else this.open();
    }
  };

  constructor() {
    super();
    const form = h('form', { class: 'ask' }, this.input, this.send);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.ask(this.input.value);
    });
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        form.requestSubmit();
      }
    });
    const close = h('button', { type: 'button', class: 'icon', 'aria-label': 'Close assistant' }, '✕');
    close.addEventListener('click', () => this.close());
    const restart = h('button', { type: 'button', class: 'icon', 'aria-label': 'Start a new conversation' }, 'New');
    restart.addEventListener('click', () => {
      this.conversation.reset();
      this.render();
      this.input.focus();
    });
    this.dialog.append(h('header', {}, this.heading, restart, close), this.log, this.starters, this.error, this.statusText, form);
    this.dialog.addEventListener('close', () => this.launcher.focus());
    this.dialog.addEventListener('keydown', (e) => this.keepFocusInside(e));
    this.launcher.addEventListener('click', () => this.open());
    // A constructed stylesheet, not a <style> element: a site's Content-Security-Policy without 'unsafe-inline'
    // styles still lets it apply.
    this.root.adoptedStyleSheets = [sharedSheet()];
    this.root.append(this.launcher, this.dialog);
  }

  connectedCallback(): void {
    this.configure();
    document.addEventListener('keydown', this.onKey);
  }

  disconnectedCallback(): void {
    document.removeEventListener('keydown', this.onKey);
  }

  attributeChangedCallback(): void {
    if (this.isConnected) this.configure();
  }

  open(): void {
    if (this.dialog.open) return;
    this.dialog.showModal();
    this.input.focus();
    this.log.scrollTop = this.log.scrollHeight;
  }

  close(): void {
    this.dialog.close();
  }

  /** Tab from the last control wraps to the first (and Shift+Tab back): focus never leaves the open panel. */
  private keepFocusInside(e: KeyboardEvent): void {
    if (e.key !== 'Tab') return;
    const focusable = [...this.dialog.querySelectorAll<HTMLElement>('button, textarea, a[href]')].filter((el) => !el.matches(':disabled') && el.getClientRects().length > 0);
    const first = focusable[0];
    const last = focusable.at(-1);
    const active = this.root.activeElement;
    if (!first || !last) return;
    if (e.shiftKey && (active === first || !this.dialog.contains(active))) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && (active === last || !this.dialog.contains(active))) {
      e.preventDefault();
      first.focus();
    }
  }

  private configure(): void {
    this.settings = readSettings(this);
    this.conversation = new Conversation(this.settings);
    if (this.settings.accent) this.style.setProperty('--accent', this.settings.accent);
    else this.style.removeProperty('--accent');
    this.heading.textContent = this.settings.title;
    this.launcher.replaceChildren(this.settings.title, h('kbd', { 'aria-hidden': 'true' }, isMac() ? '⌘K' : 'Ctrl K'));
    this.launcher.setAttribute('aria-label', `${this.settings.title} (opens the docs assistant)`);
    this.render();
  }

  private async ask(question: string): Promise<void> {
    const text = question.trim();
    if (!text || this.status === 'submitted' || this.status === 'streaming') return;
    if (!this.settings.domain || !this.settings.apiKey) {
      this.showError('This assistant is not set up: its script tag needs data-domain and data-key.');
      return;
    }
    this.input.value = '';
    this.setStatus('submitted');
    try {
      await this.conversation.ask(text, () => {
        if (this.conversation.messages.at(-1)?.role === 'assistant') this.setStatus('streaming');
        this.render();
      });
      this.setStatus('ready');
    } catch (err) {
      this.showError(await explainFailure(err, this.settings));
      this.setStatus('error');
    }
    this.render();
  }

  private setStatus(status: Status): void {
    this.status = status;
    this.dialog.dataset.status = status;
    this.send.disabled = status === 'submitted' || status === 'streaming';
    this.statusText.textContent = status === 'submitted' ? 'Searching the docs…' : status === 'streaming' ? 'Answering…' : '';
    if (status !== 'error') this.showError('');
  }

  private showError(message: string): void {
    this.error.textContent = message;
    this.error.hidden = !message;
  }

  /**
   * Shows the conversation. A message is rebuilt only when its content changed (a streaming answer), so earlier
   * answers keep their rating and a comment being typed.
   */
  private render(): void {
    const messages = this.conversation.messages;
    const rendered = new Map<string, { key: string; el: HTMLElement }>();
    const views = messages.map((m, i) => {
      const streaming = i === messages.length - 1 && (this.status === 'streaming' || this.status === 'submitted');
      const key = `${m.parts.length}:${textOf(m).length}:${streaming}`;
      const id = `${m.role}:${m.id}`;
      const kept = this.rendered.get(id);
      const el = kept?.key === key ? kept.el : m.role === 'user' ? h('div', { class: 'msg user' }, h('p', {}, textOf(m))) : this.renderAnswer(m, streaming);
      rendered.set(id, { key, el });
      return el;
    });
    this.rendered = rendered;
    this.log.replaceChildren(...views);
    this.starters.replaceChildren(
      ...(messages.length
        ? []
        : this.settings.starters.map((q) => {
            const b = h('button', { type: 'button' }, q);
            b.addEventListener('click', () => void this.ask(q));
            return h('li', {}, b);
          })),
    );
    this.log.scrollTop = this.log.scrollHeight;
  }

  private renderAnswer(m: DocsMessage, streaming: boolean): HTMLElement {
    const sources = sourcesOf(m);
    const answer = h('div', { class: 'answer' });
    answer.append(renderMarkdown(textOf(m), document));
    linkCitations(
      answer,
      sources.map((s) => ({ n: s.sourceId, url: s.url, title: s.title ?? s.url })),
      document,
    );
    for (const pre of answer.querySelectorAll('pre')) {
      const block = h('div', { class: 'code' });
      pre.before(block);
      block.append(pre, this.copyButton(pre));
    }
    // While it streams, screen readers wait for the whole answer instead of reading every re-render.
    const article = h('article', { class: 'msg assistant', 'data-message-id': m.id, 'aria-busy': String(streaming) }, answer);
    if (sources.length) {
      const list = h('ol', { class: 'sources', 'aria-label': 'Sources' });
      for (const s of sources) {
        const a = h('a', { target: '_blank', rel: 'noopener noreferrer', 'data-source-id': s.sourceId }, s.title ?? s.url);
        if (/^https?:/i.test(s.url)) a.setAttribute('href', s.url);
        list.append(h('li', { value: s.sourceId }, a));
      }
      article.append(list);
    }
    if (!streaming && m.id) article.append(this.feedback(m.id));
    // A cited source opened by click or middle click (in the text or the list) is reported to the search analytics.
    const opened = (e: MouseEvent) => {
      const link = e.button <= 1 ? (e.target as Element).closest<HTMLAnchorElement>('a[href][data-source-id]') : null;
      if (link?.dataset.sourceId) this.conversation.reportClick(m, link.dataset.sourceId);
    };
    article.addEventListener('click', opened);
    article.addEventListener('auxclick', opened);
    return article;
  }

  private copyButton(pre: HTMLPreElement): HTMLButtonElement {
    const copy = h('button', { type: 'button', class: 'copy', 'aria-label': 'Copy code' }, 'Copy');
    copy.addEventListener('click', () => {
      void navigator.clipboard.writeText(pre.textContent ?? '').then(
        () => {
          copy.textContent = 'Copied';
        },
        () => {
          copy.textContent = 'Copy failed';
        },
      );
    });
    return copy;
  }

  /** Thumbs up or down (Yes / No) is sent at once; a comment, if the reader writes one, is sent with the same rating after. */
  private feedback(messageId: string): HTMLElement {
    const group = h('div', { class: 'feedback', role: 'group', 'aria-label': 'Rate this answer' });
    const note = h('span', { role: 'status' });
    const comment = h('form', { class: 'comment', hidden: '' });
    const commentBox = h('textarea', { name: 'comment', 'aria-label': 'What could be better? (optional)', placeholder: 'What could be better? (optional)', maxlength: '2000' });
    comment.append(commentBox, h('button', { type: 'submit' }, 'Send'));
    let rating: 'up' | 'down' | undefined;
    const send = async (comment?: string) => {
      try {
        await this.conversation.rate(messageId, rating!, comment);
        note.textContent = comment ? 'Thanks, comment sent.' : 'Thanks for the feedback.';
      } catch (err) {
        note.textContent = `Feedback not sent: ${await explainFailure(err, this.settings)}`;
      }
    };
    const thumb = (value: 'up' | 'down', label: string, text: string) => {
      const b = h('button', { type: 'button', class: 'icon', 'aria-label': label, 'aria-pressed': 'false', 'data-rating': value }, text);
      b.addEventListener('click', () => {
        rating = value;
        for (const other of group.querySelectorAll('[data-rating]')) other.setAttribute('aria-pressed', String(other === b));
        comment.hidden = false;
        void send();
      });
      return b;
    };
    comment.addEventListener('submit', (e) => {
      e.preventDefault();
      if (rating && commentBox.value.trim()) void send(commentBox.value.trim());
    });
    group.append(h('span', { 'aria-hidden': 'true' }, 'Helpful?'), thumb('up', 'Helpful', 'Yes'), thumb('down', 'Not helpful', 'No'), note);
    return h('div', {}, group, comment);
  }
}

/** Registers the element once; a second copy of the script on the page is harmless. */
export function defineDocentAssistant(name = 'docent-assistant'): void {
  if (!customElements.get(name)) customElements.define(name, DocentAssistant);
}
