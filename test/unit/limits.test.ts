import { clientIp } from '../../src/limits/client-ip';
import { windowOf } from '../../src/limits/fixed-window';
import { ipLimitSubject } from '../../src/limits/ip-subject';

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

describe('per-IP limit subject', () => {
  it('is an IPv4 address itself', () => {
    expect(ipLimitSubject('203.0.113.9')).toBe('203.0.113.9');
  });

  it('is the /64 network of an IPv6 address, however the address is written', () => {
    const subject = '2001:db8:85a3:8d3::/64';
    expect(ipLimitSubject('2001:db8:85a3:8d3:1319:8a2e:370:7348')).toBe(subject);
    expect(ipLimitSubject('2001:0db8:85a3:08d3::1')).toBe(subject);
    expect(ipLimitSubject('2001:DB8:85A3:8D3:ffff::')).toBe(subject);
    expect(ipLimitSubject('2001:db8:85a3:8d4::1')).not.toBe(subject);
    expect(ipLimitSubject('::1')).toBe('0:0:0:0::/64');
    expect(ipLimitSubject('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(ipLimitSubject('64:ff9b::192.0.2.33')).toBe('64:ff9b:0:0::/64');
  });

  it('leaves what is not an address alone', () => {
    expect(ipLimitSubject('unknown')).toBe('unknown');
  });
});
