// The one module that decides what an address is: every spelling a client may write, judged as the address it names.
import type os from 'node:os';
import { AddressSet, HostNetwork, nonPublicReason, parseAddress, parseNetwork } from '../../src/net/addresses';

/** A worker on public addresses (81.2.69.162/28, 2a02:898:0:20::17/64), so the own-machine and subnet rules stand alone. */
const iface = (address: string, cidr: string, family: 'IPv4' | 'IPv6'): os.NetworkInterfaceInfo =>
  ({ address, cidr, family, netmask: '', mac: '00:00:00:00:00:00', internal: false, scopeid: 0 }) as os.NetworkInterfaceInfo;
const worker = new HostNetwork({
  lo: [iface('127.0.0.1', '127.0.0.1/8', 'IPv4'), iface('::1', '::1/128', 'IPv6')],
  eth0: [iface('81.2.69.162', '81.2.69.162/28', 'IPv4'), iface('2a02:898:0:20::17', '2a02:898:0:20::17/64', 'IPv6')],
});

describe('parseAddress', () => {
  it.each([
    ['81.2.69.162', '81.2.69.162'],
    ['::ffff:81.2.69.162', '81.2.69.162'],
    ['::ffff:5102:45a2', '81.2.69.162'],
    ['0:0:0:0:0:ffff:5102:45a2', '81.2.69.162'],
    ['0000:0000:0000:0000:0000:FFFF:5102:45A2', '81.2.69.162'],
    ['0:0:0:0:0:ffff:81.2.69.162', '81.2.69.162'],
    ['[::ffff:5102:45a2]', '81.2.69.162'],
    ['::ffff:0:5102:45a2', '81.2.69.162'],
    ['::5102:45a2', '81.2.69.162'],
    ['::81.2.69.162', '81.2.69.162'],
    ['0::ffff:7f00:1', '127.0.0.1'],
    ['::1', '0000:0000:0000:0000:0000:0000:0000:0001'],
    ['0:0:0:0:0:0:0:1', '0000:0000:0000:0000:0000:0000:0000:0001'],
    ['::', '0000:0000:0000:0000:0000:0000:0000:0000'],
    ['2A02:898:0:20::17', '2a02:0898:0000:0020:0000:0000:0000:0017'],
    ['2a02:0898:0000:0020:0000:0000:0000:0017', '2a02:0898:0000:0020:0000:0000:0000:0017'],
    ['fe80::1%eth0', 'fe80:0000:0000:0000:0000:0000:0000:0001'],
    ['64:ff9b::5102:45a2', '0064:ff9b:0000:0000:0000:0000:5102:45a2'],
  ])('reads %s as %s', (written, canonical) => {
    expect(parseAddress(written)?.address).toBe(canonical);
  });

  it('reads no host name, and no IPv4 spelling that is not a dotted quad, as an address', () => {
    for (const s of ['localhost', 'example.org', '127.1', '0x7f.0.0.1', '2130706433', '1.2.3.4.5', ':::1', '']) expect(parseAddress(s)).toBeUndefined();
  });
});

describe('nonPublicReason', () => {
  it.each([
    // The worker's own addresses, however written.
    ['81.2.69.162', /worker's own machine/],
    ['0:0:0:0:0:ffff:5102:45a2', /worker's own machine/],
    ['::ffff:81.2.69.162', /worker's own machine/],
    ['0:0:0:0:0:FFFF:81.2.69.162', /worker's own machine/],
    ['::5102:45a2', /worker's own machine/],
    ['2a02:0898:0000:0020:0000:0000:0000:0017', /worker's own machine/],
    ['2A02:898:0:20:0:0:0:17', /worker's own machine/],
    ['64:ff9b::5102:45a2', /NAT64 form of an address of the worker's own machine/],
    // Its neighbours on its own subnets.
    ['81.2.69.170', /neighbour on the worker's own subnet 81\.2\.69\.162\/28/],
    ['::ffff:5102:45aa', /neighbour on the worker's own subnet/],
    ['2a02:898:0:20::99', /neighbour on the worker's own subnet 2a02:898:0:20::17\/64/],
    ['64:ff9b::5102:45aa', /NAT64 form of a neighbour/],
    // The fixed ranges, in unusual spellings too.
    ['0:0:0:0:0:0:0:1', /loopback address \(0:0:0:0:0:0:0:1\)/],
    ['::ffff:7f00:1', /loopback address/],
    ['::127.0.0.1', /loopback address/],
    ['0:0:0:0:0:ffff:a00:1', /private or reserved address/],
    ['100.64.0.1', /private or reserved address/],
    ['fd00:0:0:0:0:0:0:2', /private or reserved address/],
    ['fe80:0:0:0:0:0:0:1', /link-local address/],
    ['169.254.169.254', /link-local address/],
    ['224.0.0.1', /private or reserved address/],
    ['255.255.255.255', /private or reserved address/],
    ['240.0.0.1', /private or reserved address/],
    ['ff02::1', /private or reserved address/],
    ['::', /private or reserved address/],
    ['192.0.2.10', /documentation or benchmarking address/],
    ['198.51.100.1', /documentation or benchmarking address/],
    ['203.0.113.80', /documentation or benchmarking address/],
    ['198.18.0.1', /documentation or benchmarking address/],
    ['198.19.255.254', /documentation or benchmarking address/],
    ['2001:db8::1', /documentation or benchmarking address/],
    ['64:ff9b::a00:1', /NAT64 form of a private or reserved address/],
    ['64:ff9b::7f00:1', /NAT64 form of a loopback address/],
    ['64:ff9b:1::808:808', /6to4, Teredo or local-use NAT64 address/],
    ['2002:808:808::1', /6to4, Teredo or local-use NAT64 address/],
    ['2002:7f00:1::1', /6to4, Teredo or local-use NAT64 address/],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /6to4, Teredo or local-use NAT64 address/],
    ['localhost', /not an address/],
  ])('refuses %s', (address, why) => {
    expect(nonPublicReason(address, worker)).toMatch(why);
  });

  it.each(['93.184.216.34', '81.2.69.200', '::ffff:5db8:d822', '2606:4700::1111', '2a02:898:0:21::1', '64:ff9b::808:808', '198.20.0.1', '192.0.3.1'])('lets %s through', (address) => {
    expect(nonPublicReason(address, worker)).toBeUndefined();
  });

  it("names the worker's own address as such even when it lies in a documentation range, a neighbour there by its range", () => {
    const docs = new HostNetwork({ eth0: [iface('192.0.2.2', '192.0.2.2/24', 'IPv4')] });
    expect(nonPublicReason('0:0:0:0:0:ffff:c000:202', docs)).toBe("an address of the worker's own machine (0:0:0:0:0:ffff:c000:202)");
    expect(nonPublicReason('192.0.2.3', docs)).toMatch(/documentation/);
  });
});

describe('AddressSet', () => {
  it('matches an operator list written one way against addresses written another', () => {
    const list = new AddressSet(['127.0.0.1/32', '::ffff:10.0.0.0/104', 'fd00:0:0:0::/8']);
    for (const a of ['127.0.0.1', '::ffff:127.0.0.1', '0:0:0:0:0:ffff:7f00:1', '10.9.9.9', 'fd12::1', 'FD12:0:0:0:0:0:0:1']) expect(list.has(a)).toBe(true);
    for (const a of ['127.0.0.2', '11.0.0.1', 'fe80::1', 'localhost']) expect(list.has(a)).toBe(false);
  });

  it('refuses what is not a network', () => {
    expect(parseNetwork('::ffff:0:0/95')).toBeUndefined();
    expect(parseNetwork('10.0.0.0/33')).toBeUndefined();
    expect(parseNetwork('10.0.0.0/')).toBeUndefined();
    expect(() => new AddressSet(['example.org/8'])).toThrow(TypeError);
  });
});
