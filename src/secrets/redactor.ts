import type { OutputFilter } from '../sandbox/types';
import { printedForms } from './forms';

/** Replaces every secret value in a text; identity when there are none. */
export type Redact = (text: string) => string;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** ASCII whitespace: what `base64 -w`, PEM, `fold` and hex dumps put between the characters of one form. */
const whitespace = /[\t\n\v\f\r ]/g;
const isWhitespace = (code: number) => code === 32 || (code >= 9 && code <= 13);

/** The forms of a turn's secrets, each mapped to its secret's name, matched with whitespace ignored. */
class FormMatcher {
  readonly pattern: RegExp;
  readonly byForm = new Map<string, string>();
  /** Characters (whitespace aside) of the longest form. */
  readonly longest: number;

  constructor(secrets: Readonly<Record<string, string>>, encode: (form: string) => string) {
    for (const [name, value] of Object.entries(secrets)) {
      for (const form of printedForms(value)) {
        const bare = encode(form).replace(whitespace, '');
        if (bare) this.byForm.set(bare, name);
      }
    }
    // Longer forms first, so a value that contains another secret is replaced whole.
    const forms = [...this.byForm.keys()].sort((a, b) => b.length - a.length);
    this.longest = forms[0]?.length ?? 0;
    this.pattern = new RegExp(forms.map(escapeRegExp).join('|'), 'g');
  }

  get empty(): boolean {
    return this.byForm.size === 0;
  }

  /**
   * Replaces the forms in `text`, found with whitespace between their characters ignored. With `startBefore`, only
   * matches starting before that many non-whitespace characters are replaced, and `end` says where the decided part
   * stops: the rest may still become a form with what comes next.
   */
  scan(text: string, startBefore?: (bare: number) => number): { out: string; end: number } {
    const bare = text.replace(whitespace, '');
    const limit = startBefore ? startBefore(bare.length) : bare.length;
    this.pattern.lastIndex = 0;
    const first = this.pattern.exec(bare);
    // The usual case, no form at all: the text as it is, up to the limit's character.
    if (!first || first.index >= limit) {
      const end = Math.max(0, limit < bare.length ? this.offsetFromEnd(text, bare.length - limit) : text.length);
      return { out: text.slice(0, end), end };
    }
    // Offsets of the non-whitespace characters: a form is searched for in them, then replaced in the text.
    const at = new Int32Array(bare.length);
    for (let i = 0, n = 0; i < text.length; i++) if (!isWhitespace(text.charCodeAt(i))) at[n++] = i;
    const parts: string[] = [];
    let cursor = 0;
    for (let m: RegExpExecArray | null = first; m && m.index < limit; m = this.pattern.exec(bare)) {
      parts.push(text.slice(cursor, at[m.index]), `[secret ${this.byForm.get(m[0])}]`);
      cursor = at[m.index + m[0].length - 1]! + 1;
    }
    const end = Math.max(cursor, limit < bare.length ? at[limit]! : text.length);
    parts.push(text.slice(cursor, end));
    return { out: parts.join(''), end };
  }

  /** Where the last `count` non-whitespace characters of the text begin. */
  private offsetFromEnd(text: string, count: number): number {
    let i = text.length;
    for (let seen = 0; i > 0 && seen < count; ) if (!isWhitespace(text.charCodeAt(--i))) seen++;
    return i;
  }
}

/**
 * One redactor for a turn, built from its secrets: each printed form (see ./forms.ts), even wrapped across lines,
 * becomes `[secret NAME]`.
 */
export function secretRedactor(secrets: Readonly<Record<string, string>>): Redact {
  const matcher = new FormMatcher(secrets, (form) => form);
  if (matcher.empty) return (text) => text;
  return (text) => matcher.scan(text).out;
}

/**
 * A byte stream redactor for a command's output, applied before it is cut to head and tail. It holds back the last
 * characters that could still begin a form (the longest form's length, plus whitespace up to `maxCarryBytes`), so a
 * form split across chunks is caught. Bytes are matched as latin1, so no UTF-8 character is ever split.
 * Undefined when there are no secrets.
 */
export function secretStreamRedactor(secrets: Readonly<Record<string, string>>): (() => OutputFilter) | undefined {
  const matcher = new FormMatcher(secrets, (form) => Buffer.from(form, 'utf8').toString('latin1'));
  if (matcher.empty) return undefined;
  const keep = matcher.longest - 1;
  // Whitespace between a held-back form's characters beyond this is let go: that is a transformation, not an accident.
  const maxCarryBytes = 4 * matcher.longest + 256;
  return () => {
    let carry = '';
    return {
      write(chunk) {
        const text = carry + chunk.toString('latin1');
        const { out, end } = matcher.scan(text, (bare) => Math.max(0, bare - keep));
        carry = text.slice(end);
        const over = carry.length - maxCarryBytes;
        if (over <= 0) return Buffer.from(out, 'latin1');
        const released = carry.slice(0, over);
        carry = carry.slice(over);
        return Buffer.from(out + released, 'latin1');
      },
      end() {
        const { out } = matcher.scan(carry);
        carry = '';
        return Buffer.from(out, 'latin1');
      },
    };
  };
}

/** Every string inside a JSON-like value, redacted (tool results the model receives). */
export function redactDeep<T>(value: T, redact: Redact): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, redact)) as T;
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v, redact)])) as T;
  }
  return value;
}
