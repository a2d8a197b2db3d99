import os from 'node:os';
import { OutboundGuard, OutboundRefused } from '../../src/net/outbound';

/** This machine's non-loopback IPv4 address: a webhook or crawl sent there reaches every service bound to 0.0.0.0. */
const ownAddress = Object.values(os.networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

// Address literals only: the decision must not depend on this machine's DNS.
describe('OutboundGuard', () => {
  const closed = new OutboundGuard([]);

  it.each([
    ['https://127.0.0.1/acme/x.git', /loopback address \(127\.0\.0\.1\)/],
    ['https://[::1]/acme/x.git', /loopback address \(::1\)/],
    ['https://10.1.2.3/acme/x.git', /private or reserved address/],
    ['https://192.168.0.10/x.git', /private or reserved address/],
    ['https://172.20.0.1/x.git', /private or reserved address/],
    ['https://169.254.169.254/latest/meta-data', /link-local address/],
    ['https://[fe80::1]/x.git', /link-local address/],
    ['https://[fd00::5]/x.git', /private or reserved address/],
    ['https://[::ffff:10.0.0.1]/x.git', /private or reserved address/],
    ['https://[::ffff:127.0.0.1]/x.git', /loopback address/],
    ['https://100.64.1.1/x.git', /private or reserved address/],
    ['https://0.0.0.0/x.git', /private or reserved address/],
    ['https://[64:ff9b::7f00:1]/x.git', /NAT64 form of a loopback address/],
  ])('refuses %s and names the setting that would allow it', async (url, reason) => {
    const err = await closed.check(new URL(url)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundRefused);
    expect((err as Error).message).toMatch(reason);
    expect((err as Error).message).toContain('DOCENT_ALLOW_PRIVATE_NETWORKS');
  });

  it.each([
    ['https://192.0.2.10/x.git', /documentation or benchmarking address/],
    ['https://198.51.100.7/x.git', /documentation or benchmarking address/],
    ['https://203.0.113.80/x.git', /documentation or benchmarking address/],
    ['https://[2001:db8::1]/x.git', /documentation or benchmarking address/],
    ['https://[64:ff9b:1::a00:1]/x.git', /6to4, Teredo or local-use NAT64/],
    ['https://[2002:a00:1::1]/x.git', /6to4, Teredo or local-use NAT64/],
    ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/x.git', /6to4, Teredo or local-use NAT64/],
  ])('refuses %s, which the old rules let through', async (url, reason) => {
    await expect(closed.check(new URL(url))).rejects.toThrow(reason);
  });

  it("refuses this machine's own address, however the URL writes it", async () => {
    const [a, b, c, d] = ownAddress!.split('.').map(Number) as [number, number, number, number];
    const mapped = `0:0:0:0:0:ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
    for (const url of [`https://${ownAddress}/`, `https://[${mapped}]/`, `https://[::ffff:${ownAddress}]/`]) {
      await expect(closed.check(new URL(url))).rejects.toThrow(/worker's own machine/);
    }
  });

  it('refuses plain http to a public address, and schemes other than http(s)', async () => {
    await expect(closed.check(new URL('http://93.184.216.34/acme/x.git'))).rejects.toThrow(/plain http/);
    await expect(closed.check(new URL('file:///etc/passwd'))).rejects.toThrow(/file: URLs are not allowed/);
  });

  it('allows https to a public address, and returns the address to pin', async () => {
    await expect(closed.check(new URL('https://93.184.216.34/acme/x.git'))).resolves.toEqual(['93.184.216.34']);
  });

  it('allows private networks and plain http inside the CIDRs an operator lists, and nothing outside them', async () => {
    const open = new OutboundGuard(['10.0.0.0/8', 'fd00::/8']);
    await expect(open.check(new URL('http://10.1.2.3/acme/x.git'))).resolves.toEqual(['10.1.2.3']);
    await expect(open.check(new URL('https://[fd00::5]/x.git'))).resolves.toEqual(['fd00::5']);
    await expect(open.check(new URL('https://[::ffff:10.9.9.9]/x.git'))).resolves.toEqual(['::ffff:a09:909']);
    await expect(open.check(new URL('https://192.168.1.1/x.git'))).rejects.toThrow(OutboundRefused);
    await expect(open.check(new URL('http://93.184.216.34/x.git'))).rejects.toThrow(/plain http/);
  });
});
