import { clientIp } from '../../src/limits/client-ip';
import { windowOf } from '../../src/limits/fixed-window';

describe('limit windows', () => {
  it('are the UTC hour, day and calendar month', () => {
    const now = new Date('2026-12-31T23:59:30Z');
    expect(windowOf('hour', now)).toEqual({ id: '2026-12-31T23', end: new Date('2027-01-01T00:00:00Z') });
    expect(windowOf('day', now)).toEqual({ id: '2026-12-31', end: new Date('2027-01-01T00:00:00Z') });
    expect(windowOf('month', now)).toEqual({ id: '2026-12', end: new Date('2027-01-01T00:00:00Z') });
    expect(windowOf('month', new Date('2027-02-10T00:00:00Z')).end).toEqual(new Date('2027-03-01T00:00:00Z'));
  });
});

describe('client IP', () => {
  it('is the socket address when no proxy is trusted, whatever X-Forwarded-For says', () => {
    expect(clientIp('203.0.113.9', '1.2.3.4', [])).toBe('203.0.113.9');
    expect(clientIp('::ffff:203.0.113.9', undefined, [])).toBe('203.0.113.9');
  });

  it('is read from X-Forwarded-For, right to left, only when the peer is a trusted proxy', () => {
    expect(clientIp('10.0.0.1', '198.51.100.7', ['10.0.0.1'])).toBe('198.51.100.7');
    // A client-forged entry on the left is ignored; the hop the trusted proxy saw is used.
    expect(clientIp('10.0.0.1', '6.6.6.6, 198.51.100.7', ['10.0.0.1'])).toBe('198.51.100.7');
    expect(clientIp('10.0.0.1', '198.51.100.7, 10.0.0.2', ['10.0.0.1', '10.0.0.2'])).toBe('198.51.100.7');
    expect(clientIp('10.0.0.1', 'garbage', ['10.0.0.1'])).toBe('10.0.0.1');
    expect(clientIp('10.0.0.9', '198.51.100.7', ['10.0.0.1'])).toBe('10.0.0.9');
  });
});
