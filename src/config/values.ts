// The kinds of value settings take (ports, sizes, lists of origins, networks or keys), each checked where it is read.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import { parseNetwork } from '../net/addresses';
import { parseEgressAllowRule, type EgressAllowRule } from '../sandbox/egress/allow-rules';

/** A comma-separated list, each entry trimmed, empty entries dropped: the shape of every list setting. */
export const commaList = z.string().transform((v) =>
  v
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean),
);

export const originList = commaList
  .transform((list) => list.map((o) => o.replace(/\/$/, '')))
  .refine((list) => list.every((o) => URL.canParse(o) && new URL(o).origin === o.toLowerCase() && /^https?:/.test(o)), 'must be a comma-separated list of origins (scheme://host[:port])');

export const port = z.coerce.number().int().min(0).max(65535);
export const megabytes = z.coerce
  .number()
  .int()
  .min(1)
  .max(1024 * 1024);

export const cidrList = commaList.refine((list) => list.every(isCidr), 'must be a comma-separated list of CIDRs such as 10.0.0.0/8 or fd00::/8');

/** `address/bits` as written (no brackets, the prefix given); parseNetwork also keeps an IPv4-mapped network at /96 or more. */
function isCidr(value: string): boolean {
  return value.includes('/') && isIP(value.slice(0, value.indexOf('/'))) !== 0 && parseNetwork(value) !== undefined;
}
export const positiveInt = z.coerce.number().int().positive();

// `host:port` or `CIDR:port` entries, comma-separated.
export const egressAllowList = commaList.transform((entries, ctx) => {
  const rules: EgressAllowRule[] = [];
  for (const entry of entries) {
    try {
      rules.push(parseEgressAllowRule(entry));
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `${(err as Error).message} (e.g. 10.1.2.3:5432, 10.0.0.0/8:443, registry.internal:8080)` });
      return z.NEVER;
    }
  }
  return rules;
});

// A PEM given inline (secrets injected as variables) or as a file path (mounted secrets); read once, here.
export const pem = z.string().transform((v, ctx) => {
  if (v.trimStart().startsWith('-----BEGIN')) return Buffer.from(v);
  try {
    return readFileSync(v);
  } catch {
    ctx.addIssue({ code: 'custom', message: `cannot read the file ${v}` });
    return z.NEVER;
  }
});

const keyId = /^[A-Za-z0-9._-]{1,64}$/;
// `id:base64key,…`: the first key encrypts, every key decrypts (rotation: put the new key first, keep the old ones).
export const payloadKeys = commaList.transform((entries, ctx) => {
  const keys = new Map<string, Buffer>();
  for (const entry of entries) {
    const [id, material, ...rest] = entry.split(':');
    const key = Buffer.from(material ?? '', 'base64');
    // The key itself never appears in the message: only its id and position.
    if (rest.length || !id || !keyId.test(id) || key.length !== 32) {
      ctx.addIssue({ code: 'custom', message: `entry ${keys.size + 1} must be <id>:<32 bytes in base64>, the id 1-64 letters, digits, . _ or -` });
      return z.NEVER;
    }
    if (keys.has(id)) {
      ctx.addIssue({ code: 'custom', message: `key id ${id} appears twice` });
      return z.NEVER;
    }
    keys.set(id, key);
  }
  if (keys.size === 0) {
    ctx.addIssue({ code: 'custom', message: 'must name at least one key' });
    return z.NEVER;
  }
  return { encryptWith: keys.keys().next().value as string, keys };
});

// A JSON setting, parsed before its schema checks it.
export const json = z.string().transform((v, ctx) => {
  try {
    return JSON.parse(v) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be JSON' });
    return z.NEVER;
  }
});

export const nodeList = commaList.refine(
  (list) => list.length > 0 && list.every((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol)),
  'must be one URL or a comma-separated list of node URLs',
);

export const onOff = z.enum(['on', 'off']);
