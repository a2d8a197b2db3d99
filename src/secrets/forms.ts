// The ways a secret's value is likely to be printed, so a redactor or a file sweep can recognise each of them.

/** The characters of base64 that hold bits of the value alone, for a value starting `offset` bytes into the encoded data. */
function base64Core(bytes: Buffer, offset: number): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
  // Character i holds bits 6i..6i+5: keep those inside the value's bits, whatever bytes come before or after it.
  return encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
}

const percentEach = (bytes: Buffer) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/**
 * The value as is, reversed, JSON-escaped, URL-encoded, in hex, and in base64 (standard and url-safe) at each of the
 * three byte offsets it can start at inside a longer encoded text, such as `base64("user:" + token)`. A base64 form is
 * only the part that does not depend on neighbouring bytes, so at most 4 bits at each end stay unredacted.
 */
export function printedForms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const hex = bytes.toString('hex');
  const uri = encodeURIComponent(value);
  const forms = [value, [...value].reverse().join(''), JSON.stringify(value).slice(1, -1), hex, hex.toUpperCase()];
  forms.push(
    uri,
    uri.replace(/%[0-9A-F]{2}/g, (p) => p.toLowerCase()),
    uri.replace(/%20/g, '+'),
  );
  forms.push(percentEach(bytes), percentEach(bytes).toUpperCase());
  for (const offset of [0, 1, 2]) {
    const core = base64Core(bytes, offset);
    forms.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...new Set(forms)].filter((f) => f.length > 0);
}

/** Forms that consist of encoding characters only (hex, base64): a tool may wrap them at any column (base64 -w 76, PEM's 64). */
export function encodedForms(value: string): string[] {
  return printedForms(value).filter((f) => /^[A-Za-z0-9+/_-]+$/.test(f) && f !== value);
}
