import { AppError } from '../errors';
import { AddressSet, parseNetwork } from '../net/addresses';

// What a key may be used for beyond who it is: from where (addresses and networks) and, for admin keys, whether it
// may change anything. Mintlify's keys have both; docent checks them on every request, after the key itself.

export type KeyScope = 'read' | 'write';

export interface KeyRestrictions {
  allowedIps?: string[];
  scope?: KeyScope;
}

/** How a request uses its key: the client's address (behind trusted proxies, as the limits see it) and whether it writes. */
export interface KeyUse {
  clientIp: string;
  writes: boolean;
}

/** The most addresses and networks one key may list. */
export const maxAllowedIps = 50;

/** A key's restrictions as stored, or undefined when it has none. */
export function restrictionsOf(doc: KeyRestrictions): KeyRestrictions | undefined {
  const r = { ...(doc.allowedIps?.length && { allowedIps: doc.allowedIps }), ...(doc.scope && { scope: doc.scope }) };
  return Object.keys(r).length ? r : undefined;
}

/** Checks the restrictions a new key is made with: real networks, a scope only on admin keys, an expiry in the future. */
export function checkKeyRestrictions(spec: KeyRestrictions & { kind: string; expiresAt?: Date }): void {
  if (spec.allowedIps) {
    if (spec.allowedIps.length > maxAllowedIps) throw new AppError('invalid_argument', `allowedIps: at most ${maxAllowedIps} addresses or networks`);
    const bad = spec.allowedIps.find((c) => !parseNetwork(c));
    if (bad !== undefined) throw new AppError('invalid_argument', `allowedIps: "${bad.slice(0, 60)}" is not an address or a network such as 203.0.113.0/24`);
  }
  if (spec.scope && spec.kind !== 'admin') throw new AppError('invalid_argument', 'scope: only admin keys have a scope');
  if (spec.expiresAt && spec.expiresAt.getTime() <= Date.now()) throw new AppError('invalid_argument', 'expiresAt: must be in the future');
}

/** Refuses a request its key may not make: from an address the key does not allow, or a change with a read-only key (403). */
export function checkKeyUse(restrictions: KeyRestrictions | undefined, use: KeyUse): void {
  if (!restrictions) return;
  if (restrictions.allowedIps?.length && !new AddressSet(restrictions.allowedIps).has(use.clientIp)) {
    throw new AppError('permission_denied', 'this key may not be used from this address (its allowed addresses do not include it)');
  }
  if (restrictions.scope === 'read' && use.writes) throw new AppError('permission_denied', 'this key is read-only: it may not change anything');
}

/** Connect methods that only read: their names say so (GetAgentJob, ListAutomations, WatchAgentJob, …). */
export const isReadingMethod = (name: string) => /^(Get|List|Watch)[A-Z]/.test(name);
