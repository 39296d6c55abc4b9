/**
 * Which IP addresses a webhook may be delivered to. Pure: no DNS, no sockets.
 *
 * IPv6 is decided by allow-list (only global unicast 2000::/3 minus the special blocks inside it), so the many
 * non-routable blocks outside it (::1, ::, fe80::/10, fc00::/7, ff00::/8, fec0::/10, 100::/64, 64:ff9b:1::/48 …)
 * are refused without being listed one by one, and a block IANA assigns tomorrow is refused until reviewed.
 * IPv6 forms that carry an IPv4 address the kernel or a gateway will actually reach (mapped, NAT64, 6to4) are
 * judged by that IPv4 address, because that is where the packets go.
 *
 * Hand-written rather than node:net's BlockList: BlockList matches subnets but cannot hand back the IPv4 address
 * embedded in a NAT64 or 6to4 address, and once the address is parsed to a number a prefix match is one comparison.
 */
import { isIP } from 'node:net';

type Range = readonly [base: bigint, prefixLength: number];

const IPV4_BITS = 32;
const IPV6_BITS = 128;

/** RFC 6890 / IANA special-purpose IPv4 blocks that are not globally reachable, or not unicast. */
const NON_PUBLIC_IPV4: readonly Range[] = [
  v4('0.0.0.0', 8), // "this network"; on Linux 0.0.0.0 reaches the local host
  v4('10.0.0.0', 8),
  v4('100.64.0.0', 10), // carrier-grade NAT: the provider's internal network
  v4('127.0.0.0', 8),
  v4('169.254.0.0', 16), // link-local, home of the cloud metadata service 169.254.169.254
  v4('172.16.0.0', 12),
  v4('192.0.0.0', 24), // IETF protocol assignments
  v4('192.0.2.0', 24), // TEST-NET-1
  v4('192.88.99.0', 24), // deprecated 6to4 relay anycast
  v4('192.168.0.0', 16),
  v4('198.18.0.0', 15), // benchmarking
  v4('198.51.100.0', 24), // TEST-NET-2
  v4('203.0.113.0', 24), // TEST-NET-3
  v4('224.0.0.0', 4), // multicast
  v4('240.0.0.0', 4), // reserved, and 255.255.255.255 broadcast
];

const GLOBAL_UNICAST_IPV6: Range = v6('2000::', 3);

/** Blocks inside 2000::/3 that are still not somewhere a webhook may go. */
const NON_PUBLIC_IPV6_IN_GLOBAL_UNICAST: readonly Range[] = [
  v6('2001::', 23), // IETF protocol assignments: Teredo 2001::/32 (tunnels to an arbitrary IPv4), benchmarking, ORCHID
  v6('2001:db8::', 32), // documentation
  v6('2002::', 16), // 6to4: judged by its embedded IPv4 before this list is consulted; listed so nothing else slips through
  v6('3fff::', 20), // documentation (RFC 9637)
  v6('5f00::', 16), // SRv6 SIDs (RFC 9602)
];

const IPV4_MAPPED: Range = v6('::ffff:0:0', 96);
const NAT64_WELL_KNOWN: Range = v6('64:ff9b::', 96);
const SIX_TO_FOUR: Range = v6('2002::', 16);

/** True when `ip` is a well-formed IPv4 or IPv6 address that a webhook may be sent to. Anything malformed is false. */
export function isPublicAddress(ip: string): boolean {
  const parsed = parse(ip);
  if (parsed === null) return false;
  if (parsed.family === 4) return isPublicIpv4(parsed.value);
  const embedded = embeddedIpv4(parsed.value);
  if (embedded !== null) return isPublicIpv4(embedded);
  if (!inRange(parsed.value, GLOBAL_UNICAST_IPV6, IPV6_BITS)) return false;
  return !NON_PUBLIC_IPV6_IN_GLOBAL_UNICAST.some((range) => inRange(parsed.value, range, IPV6_BITS));
}

/** True for this host's own loopback: 127.0.0.0/8, ::1, and 127.x written as IPv4-mapped IPv6. */
export function isLoopbackAddress(ip: string): boolean {
  const parsed = parse(ip);
  if (parsed === null) return false;
  if (parsed.family === 4) return isLoopbackIpv4(parsed.value);
  if (parsed.value === 1n) return true;
  // Only the mapped form: a NAT64 or 6to4 address holding 127.x leads to the gateway's loopback, not ours.
  return inRange(parsed.value, IPV4_MAPPED, IPV6_BITS) && isLoopbackIpv4(parsed.value & 0xffff_ffffn);
}

function isPublicIpv4(value: bigint): boolean {
  return !NON_PUBLIC_IPV4.some((range) => inRange(value, range, IPV4_BITS));
}

function isLoopbackIpv4(value: bigint): boolean {
  return value >> 24n === 127n;
}

/** The IPv4 address that packets to this IPv6 address really reach, for the forms that have one. */
function embeddedIpv4(value: bigint): bigint | null {
  if (inRange(value, IPV4_MAPPED, IPV6_BITS) || inRange(value, NAT64_WELL_KNOWN, IPV6_BITS)) return value & 0xffff_ffffn;
  if (inRange(value, SIX_TO_FOUR, IPV6_BITS)) return (value >> 80n) & 0xffff_ffffn;
  return null;
}

function inRange(value: bigint, [base, prefixLength]: Range, bits: number): boolean {
  const shift = BigInt(bits - prefixLength);
  return value >> shift === base >> shift;
}

type Parsed = { family: 4; value: bigint } | { family: 6; value: bigint };

function parse(ip: string): Parsed | null {
  // A zone id ("fe80::1%eth0") only exists for scoped, link-local addresses; bracketed or padded text is not an address.
  if (typeof ip !== 'string' || ip.includes('%')) return null;
  const family = isIP(ip);
  if (family === 4) {
    const value = parseIpv4(ip);
    return value === null ? null : { family: 4, value };
  }
  if (family === 6) {
    const value = parseIpv6(ip);
    return value === null ? null : { family: 6, value };
  }
  return null;
}

function parseIpv4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = (value << 8n) | BigInt(octet);
  }
  return value;
}

function parseIpv6(text: string): bigint | null {
  let hex = text;
  const lastColon = hex.lastIndexOf(':');
  const tail = hex.slice(lastColon + 1);
  if (tail.includes('.')) {
    // Dotted IPv4 tail ("::ffff:10.0.0.1"): rewrite it as the two hex groups it stands for.
    const v4 = parseIpv4(tail);
    if (v4 === null) return null;
    hex = `${hex.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = hex.split('::');
  if (halves.length > 2) return null;
  const groupsOf = (half: string | undefined): string[] => (half === undefined || half === '' ? [] : half.split(':'));
  const head = groupsOf(halves[0]);
  const rest = groupsOf(halves[1]);
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = halves.length === 1 ? head : [...head, ...Array<string>(missing).fill('0'), ...rest];
  let value = 0n;
  for (const group of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
    value = (value << 16n) | BigInt(`0x${group}`);
  }
  return value;
}

function v4(text: string, prefixLength: number): Range {
  const value = parseIpv4(text);
  if (value === null) throw new Error(`bad IPv4 range ${text}`);
  return [value, prefixLength];
}

function v6(text: string, prefixLength: number): Range {
  const value = parseIpv6(text);
  if (value === null) throw new Error(`bad IPv6 range ${text}`);
  return [value, prefixLength];
}
