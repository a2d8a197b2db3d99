import { Code } from '@connectrpc/connect';
import { AppError, toRestError } from '../../src/errors';
import { toConnectError } from '../../src/rpc/public-errors';

describe('error contract', () => {
  it('shows an AppError with its status, code, retry hint and headers', () => {
    expect(toRestError(new AppError('resource_exhausted', 'slow down', 30, { 'ratelimit-limit': '100' }))).toEqual({
      status: 429,
      body: { error: 'slow down', code: 'resource_exhausted', retryAfterSeconds: 30 },
      headers: { 'retry-after': '30', 'ratelimit-limit': '100' },
    });
    expect(toConnectError(new AppError('not_found', 'job not found')).code).toBe(Code.NotFound);
  });

  it('gives Connect clients ResourceExhausted with the retry headers as metadata', () => {
    const e = toConnectError(new AppError('resource_exhausted', 'slow down', 30, { 'ratelimit-remaining': '0' }));
    expect(e.code).toBe(Code.ResourceExhausted);
    expect(e.metadata.get('retry-after')).toBe('30');
    expect(e.metadata.get('ratelimit-remaining')).toBe('0');
  });

  it('never shows an unexpected error message to a client', () => {
    const leak = new Error('E11000 duplicate key at mongodb://admin:hunter2@db:27017');
    const rest = toRestError(leak);
    expect(rest).toEqual({ status: 500, body: { error: 'internal error', code: 'internal' }, headers: {} });
    expect(toConnectError(leak).message).not.toContain('hunter2');
  });

  it('answers 503 unavailable when a database driver says its server is down', () => {
    const down = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:27017'), { name: 'MongoServerSelectionError' });
    expect(toRestError(down).status).toBe(503);
    expect(toRestError(down).body.error).not.toContain('10.0.0.5');
  });
});
