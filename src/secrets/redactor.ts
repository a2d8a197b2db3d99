/** Replaces every secret value in a text; identity when there are none. */
export type Redact = (text: string) => string;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The forms a value is likely to be printed in: as is, and base64 (standard and url-safe, padded or not). */
function printedForms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const std = bytes.toString('base64');
  return [value, std, std.replace(/=+$/, ''), bytes.toString('base64url')];
}

/**
 * One redactor for a turn, built from its secrets: each printed form becomes `[secret NAME]`. Longer forms are tried
 * first, so a value that contains another secret is replaced whole.
 */
export function secretRedactor(secrets: Readonly<Record<string, string>>): Redact {
  const byForm = new Map<string, string>();
  for (const [name, value] of Object.entries(secrets)) for (const form of printedForms(value)) if (form) byForm.set(form, name);
  if (byForm.size === 0) return (text) => text;
  const forms = [...byForm.keys()].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(forms.map(escapeRegExp).join('|'), 'g');
  return (text) => text.replace(pattern, (found) => `[secret ${byForm.get(found)}]`);
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
