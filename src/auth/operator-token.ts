import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors';

const digest = (value: string) => createHash('sha256').update(value).digest();
const apiKeyShape = /^docent_(admin|asst|op)_/;

/**
 * Checks `Authorization: Bearer <token>` for routes an operator's tool calls (the codec endpoint with DOCENT_CODEC_TOKEN,
 * /metrics with DOCENT_METRICS_TOKEN); throws 401 or 403. `setting` names the variable in the answers.
 */
export function operatorTokenCheck(token: string | undefined, setting: string): (authorization: string | undefined) => Promise<void> {
  const expected = token ? digest(token) : undefined;
  return async (authorization) => {
    const match = /^Bearer (\S{1,512})$/.exec(authorization?.trim() ?? '');
    if (!match) throw new AppError('unauthenticated', `missing or malformed Authorization header: expected "Bearer <${setting}>"`);
    // An API key is a real credential of the wrong kind, as a wrong key kind is elsewhere.
    if (apiKeyShape.test(match[1]!)) throw new AppError('permission_denied', `this endpoint needs the operator token (${setting}), not an API key`);
    if (!expected) throw new AppError('unauthenticated', `this endpoint is off: the operator has not set ${setting}`);
    // Digests of equal length, so the comparison takes the same time whatever the caller sent.
    if (!timingSafeEqual(digest(match[1]!), expected)) throw new AppError('unauthenticated', 'invalid operator token');
  };
}
