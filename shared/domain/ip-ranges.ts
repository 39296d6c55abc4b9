/**
 * Which IP addresses a webhook may be delivered to. Pure: no DNS, no sockets.
 *
 * IPv6 is decided by allow-list (only global unicast 2000::/3, minus what ipaddr.js names a special range inside it),
 * so the many non-routable blocks outside it (::1, ::, fe80::/10, fc00::/7, ff00::/8, fec0::/10, 100::/64,
 * 64:ff9b:1::/48, 5f00::/16, IPv4-compatible ::/96 …) are refused without being listed one by one, and a block IANA
 * assigns tomorrow is refused until reviewed. IPv6 forms that carry an IPv4 address the kernel or a gateway will
 * actually reach (mapped, NAT64, 6to4) are judged by that IPv4 address, because that is where the packets go.
 * Teredo is not: its server and client fields are no promise about where a relay forwards, so it stays refused.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

const GLOBAL_UNICAST_IPV6 = ipaddr.IPv6.parseCIDR('2000::/3');
// Only the well-known /96: ipaddr.js's 'rfc6052' also covers local-use 64:ff9b:1::/48, whose IPv4 sits wherever the
// operator chose, so that block is left to the allow-list, which refuses it.
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/** True when `ip` is a well-formed IPv4 or IPv6 address that a webhook may be sent to. Anything malformed is false. */
export function isPublicAddress(ip: string): boolean {
  const address = parse(ip);
  if (address === null) return false;
  // 'unicast' is ipaddr.js's name for "in none of its special ranges"; that also refuses AS112 and AMT anycast.
  if (address instanceof ipaddr.IPv4) return address.range() === 'unicast';
  const embedded = embeddedIpv4(address);
  if (embedded !== null) return embedded.range() === 'unicast';
  return address.match(GLOBAL_UNICAST_IPV6) && address.range() === 'unicast';
}

/** True for this host's own loopback: 127.0.0.0/8, ::1, and 127.x written as IPv4-mapped IPv6. */
export function isLoopbackAddress(ip: string): boolean {
  const address = parse(ip);
  if (address === null) return false;
  // Only the mapped form: a NAT64 or 6to4 address holding 127.x leads to the gateway's loopback, not ours.
  const own = address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() ? address.toIPv4Address() : address;
  return own.range() === 'loopback';
}

function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const bytes = address.toByteArray();
  if (address.isIPv4MappedAddress() || address.match(NAT64_WELL_KNOWN)) return new ipaddr.IPv4(bytes.slice(12));
  if (address.range() === '6to4') return new ipaddr.IPv4(bytes.slice(2, 6));
  return null;
}

function parse(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  // node:net's isIP is the syntax gate because ipaddr.js also accepts octal, hex and one-number IPv4, inside IPv6
  // too ("::ffff:0x7f.1"). A zone id ("fe80::1%eth0") only exists for scoped, link-local addresses.
  if (typeof ip !== 'string' || ip.includes('%') || isIP(ip) === 0) return null;
  // ipaddr.js reads "::a.b.c.d" as mapped ::ffff:a.b.c.d, but it is IPv4-compatible ::a.b.c.d (RFC 4291 2.5.5.1),
  // which is how Node prints such socket addresses: "::127.0.0.1" is not our loopback, "::8.8.8.8" is not public.
  const text = ip.replace(/^::(?=[\d.]+$)/, '::0:');
  return ipaddr.isValid(text) ? ipaddr.parse(text) : null;
}
