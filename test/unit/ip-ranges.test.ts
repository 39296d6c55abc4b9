import { describe, expect, it } from 'vitest';
import { isLoopbackAddress, isPublicAddress } from '../../shared/domain/ip-ranges.js';

describe('isPublicAddress', () => {
  it.each([
    ['8.8.8.8', 'Google DNS'],
    ['1.1.1.1', 'Cloudflare DNS'],
    ['93.184.216.34', 'example.com'],
    ['9.255.255.255', 'just below 10/8'],
    ['11.0.0.0', 'just above 10/8'],
    ['100.63.255.255', 'just below 100.64/10'],
    ['100.128.0.0', 'just above 100.64/10'],
    ['126.255.255.255', 'just below 127/8'],
    ['128.0.0.0', 'just above 127/8'],
    ['169.253.255.255', 'just below 169.254/16'],
    ['169.255.0.0', 'just above 169.254/16'],
    ['172.15.255.255', 'just below 172.16/12'],
    ['172.32.0.0', 'just above 172.16/12'],
    ['192.0.1.1', 'between 192.0.0/24 and 192.0.2/24'],
    ['192.88.98.255', 'just below 192.88.99/24'],
    ['192.167.255.255', 'just below 192.168/16'],
    ['192.169.0.0', 'just above 192.168/16'],
    ['198.17.255.255', 'just below 198.18/15'],
    ['198.20.0.0', 'just above 198.18/15'],
    ['198.51.99.255', 'just below 198.51.100/24'],
    ['203.0.112.255', 'just below 203.0.113/24'],
    ['223.255.255.255', 'last address below multicast'],
    ['2606:4700:4700::1111', 'Cloudflare DNS over IPv6'],
    ['2001:4860:4860::8888', 'Google DNS over IPv6'],
    ['2a00:1450:4001:80b::200e', 'a European global unicast'],
    ['::ffff:8.8.8.8', 'IPv4-mapped public'],
    ['::ffff:808:808', 'IPv4-mapped public in hex'],
    ['64:ff9b::8.8.8.8', 'NAT64 of a public IPv4'],
    ['2002:808:808::1', '6to4 of a public IPv4'],
    ['2001:200::1', 'just above 2001::/23'],
    ['2001:db9::1', 'just above 2001:db8::/32'],
  ])('%s is public (%s)', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });

  it.each([
    ['0.0.0.0', '0/8 this network'],
    ['0.255.255.255', '0/8 this network, last'],
    ['10.0.0.0', '10/8'],
    ['10.0.0.1', '10/8'],
    ['10.255.255.255', '10/8, last'],
    ['100.64.0.0', '100.64/10 CGNAT'],
    ['100.127.255.255', '100.64/10 CGNAT, last'],
    ['127.0.0.1', '127/8 loopback'],
    ['127.255.255.254', '127/8 loopback, far end'],
    ['169.254.0.1', '169.254/16 link-local'],
    ['169.254.169.254', 'cloud metadata service'],
    ['172.16.0.1', '172.16/12'],
    ['172.31.255.255', '172.16/12, last'],
    ['192.0.0.1', '192.0.0/24 IETF protocol assignments'],
    ['192.0.0.255', '192.0.0/24, last'],
    ['192.0.2.1', '192.0.2/24 TEST-NET-1'],
    ['192.88.99.1', '192.88.99/24 6to4 relay'],
    ['192.168.0.1', '192.168/16'],
    ['192.168.255.255', '192.168/16, last'],
    ['198.18.0.1', '198.18/15 benchmarking'],
    ['198.19.255.255', '198.18/15 benchmarking, last'],
    ['198.51.100.1', '198.51.100/24 TEST-NET-2'],
    ['203.0.113.1', '203.0.113/24 TEST-NET-3'],
    ['224.0.0.1', '224/4 multicast'],
    ['239.255.255.255', '224/4 multicast, last'],
    ['240.0.0.1', '240/4 reserved'],
    ['255.255.255.254', '240/4 reserved, far end'],
    ['255.255.255.255', 'limited broadcast'],
    // Globally reachable by IANA, but DNS sinks and multicast relays: no webhook receiver lives there.
    ['192.175.48.1', '192.175.48/24 AS112'],
    ['192.31.196.1', '192.31.196/24 AS112'],
    ['192.52.193.1', '192.52.193/24 AMT relay'],
    ['2620:4f:8000::1', '2620:4f:8000::/48 AS112'],
  ])('%s is not public (%s)', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each([
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback, uncompressed'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local fe80::/10'],
    ['febf:ffff::1', 'link-local fe80::/10, far end'],
    ['FE80::ABCD', 'link-local in upper case'],
    ['fc00::1', 'unique-local fc00::/7'],
    ['fd12:3456:789a::1', 'unique-local fd00::/8'],
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'unique-local, last'],
    ['ff02::1', 'multicast ff00::/8'],
    ['ff0e::101', 'global-scope multicast is still multicast'],
    ['fec0::1', 'deprecated site-local'],
    ['100::1', 'discard-only 100::/64'],
    ['2001:db8::1', 'documentation 2001:db8::/32'],
    ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation, last'],
    ['3fff::1', 'documentation 3fff::/20'],
    ['2001::1', 'Teredo 2001::/32'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo, a real-looking one'],
    ['2001:2::1', 'benchmarking 2001:2::/48'],
    ['2001:10::1', 'ORCHID'],
    ['5f00::1', 'SRv6 SIDs'],
    ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
    ['64:ff9b::10.0.0.1', 'NAT64 of 10.0.0.1, dotted'],
    ['64:ff9b::127.0.0.1', 'NAT64 of loopback'],
    ['64:ff9b::169.254.169.254', 'NAT64 of the metadata service'],
    ['64:ff9b:1::8.8.8.8', 'local-use NAT64 64:ff9b:1::/48'],
    ['2002:a00:1::1', '6to4 of 10.0.0.1'],
    ['2002:7f00:1::', '6to4 of 127.0.0.1'],
    ['2002:a9fe:a9fe::1', '6to4 of 169.254.169.254'],
    ['::a00:1', 'deprecated IPv4-compatible'],
    ['::ffff:0:a00:1', 'IPv4-translated (SIIT)'],
  ])('%s is not public (%s)', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each([
    ['::ffff:10.0.0.1', 'mapped 10/8'],
    ['::ffff:a00:1', 'mapped 10/8 in hex'],
    ['::ffff:127.0.0.1', 'mapped loopback'],
    ['::ffff:7f00:1', 'mapped loopback as the URL parser writes it'],
    ['::FFFF:169.254.169.254', 'mapped metadata service, upper case'],
    ['0:0:0:0:0:ffff:192.168.1.1', 'mapped 192.168/16, uncompressed'],
    ['::ffff:0.0.0.0', 'mapped unspecified'],
    ['::ffff:100.64.0.1', 'mapped CGNAT'],
  ])('%s is not public (%s)', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each([
    '',
    'localhost',
    'example.com',
    '8.8.8',
    '8.8.8.8.8',
    '256.1.1.1',
    '08.8.8.8',
    '8.8.8.8 ',
    ' 8.8.8.8',
    '0x08.8.8.8',
    '134744072',
    '[2606:4700:4700::1111]',
    '2606:4700:4700::1111::1',
    '2606:4700:4700:1111',
    '2606:4700:4700:0:0:0:0:1111:1',
    '12345::1',
    'g::1',
    '2606:4700:4700::1111%eth0',
    'fe80::1%eth0',
    '::ffff:8.8.8.256',
    '8.8.8.8/32',
  ])('malformed %j is not public', (text) => {
    expect(isPublicAddress(text)).toBe(false);
  });
});

describe('isLoopbackAddress', () => {
  it.each(['127.0.0.1', '127.1.2.3', '127.255.255.255', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::ffff:7f00:1'])(
    '%s is loopback',
    (ip) => expect(isLoopbackAddress(ip)).toBe(true),
  );

  it.each([
    ['0.0.0.0', 'unspecified is not loopback'],
    ['::', 'unspecified is not loopback'],
    ['10.0.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['128.0.0.1', 'just above 127/8'],
    ['126.255.255.255', 'just below 127/8'],
    ['::2', 'next to ::1'],
    ['64:ff9b::127.0.0.1', "NAT64 reaches the gateway's loopback, not ours"],
    ['2002:7f00:1::', '6to4 of 127.0.0.1'],
    ['8.8.8.8', 'public'],
    ['localhost', 'a name, not an address'],
    ['[::1]', 'bracketed'],
    ['', 'empty'],
  ])('%s is not loopback (%s)', (ip) => expect(isLoopbackAddress(ip)).toBe(false));
});
