import { createHmac } from 'node:crypto';

/**
 * Who asked, as the gap trigger counts readers (src/automations/gap-trigger.ts): the client's address under a keyed
 * hash, so one reader asking twenty times counts once and the address itself is never stored. The key is the
 * server's DOCENT_SECRET_KEY when set; without it the hash is of the address and domain alone.
 */
export function readerId(domain: string, remoteAddress: string | undefined, secretKey: Buffer | undefined): string | undefined {
  if (!remoteAddress) return undefined;
  return createHmac('sha256', secretKey ?? 'docent-reader')
    .update(`${domain}\n${remoteAddress}`)
    .digest('base64url')
    .slice(0, 22);
}
