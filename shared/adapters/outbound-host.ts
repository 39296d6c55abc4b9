/**
 * Which hosts the service may open a connection to on a tenant's say-so (a webhook receiver, the bank's SFTP server).
 *
 * The name is resolved once and every address is checked; the caller then connects to a checked address, never to
 * the name, so a DNS answer that changes between the check and the connection (rebinding) cannot steer it inside the
 * network. Production: public addresses only. Sandbox (a local stack): also loopback, but not the stack's own ports.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isLoopbackAddress, isPublicAddress } from '../domain/ip-ranges.js';

export type HostPolicy = 'sandbox' | 'production';

export type Resolver = (hostname: string) => Promise<string[]>;

/**
 * `addresses`: the checked IPs, in the resolver's order; connect to the first. `unresolved`: refused only because the
 * name did not resolve (no address to judge).
 */
export type HostCheck = { ok: true; addresses: readonly string[] } | { ok: false; reason: string; unresolved?: true };

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/** Whether the sandbox's loopback exemption applies: a loopback IP literal, or the name `localhost` itself. */
export function isSandboxLoopback(host: string, policy: HostPolicy): boolean {
  return policy === 'sandbox' && ((isIP(host) !== 0 && isLoopbackAddress(host)) || host === 'localhost');
}

/**
 * Checks `host` (lower case, no brackets, no trailing dot) and `port` under `policy`. `service` names what is expected
 * there, for the refusal of a loopback port of the stack's own ("a webhook receiver").
 */
export async function checkOutboundHost(
  host: string,
  port: number,
  policy: HostPolicy,
  options: { service: string; resolve?: Resolver },
): Promise<HostCheck> {
  const literal = isIP(host) !== 0;
  if (isSandboxLoopback(host, policy)) {
    if (reservedLoopbackPorts().has(port))
      return refuse(`port ${port} on loopback is one of the stack's own services, not ${options.service}`);
    // "localhost" is pinned here instead of asked of DNS or /etc/hosts, so the sandbox exemption always means loopback.
    return { ok: true, addresses: literal ? [host] : ['127.0.0.1', '::1'] };
  }
  if (literal) return isPublicAddress(host) ? { ok: true, addresses: [host] } : refuse(`address ${host} is not public`);
  if (isLocalhostName(host)) return refuse('localhost is not allowed here');

  let addresses: unknown;
  try {
    addresses = await (options.resolve ?? systemResolver)(host);
  } catch {
    return { ok: false, reason: 'hostname did not resolve', unresolved: true };
  }
  if (!Array.isArray(addresses) || addresses.length === 0)
    return { ok: false, reason: 'hostname did not resolve', unresolved: true };
  // Every address, not just the first: the resolver's order is not ours to rely on, and a later retry might pick another.
  // The offending address is not named, so the reason cannot be used to map the internal DNS.
  if (!addresses.every((address) => typeof address === 'string' && isPublicAddress(address))) {
    return refuse('hostname resolves to an address that is not public');
  }
  return { ok: true, addresses: addresses as string[] };
}

/**
 * The ports the local stack itself listens on (its engines, its HTTPS and HTTP listeners), from
 * PAYROLL_RESERVED_LOOPBACK_PORTS (comma-separated; set by local/start.ts). A sandbox target may be on loopback, but
 * not on these: the service would drive the stack's own engines. Read on every check, registration and connection
 * alike, so ports the stack chose after the handlers loaded count too.
 */
export function reservedLoopbackPorts(): ReadonlySet<number> {
  const raw = process.env.PAYROLL_RESERVED_LOOPBACK_PORTS ?? '';
  const ports = new Set<number>();
  for (const entry of raw.split(',')) {
    if (entry.trim() === '') continue;
    const port = Number(entry);
    // A malformed list fails closed: the check throws, so registration errs and delivery fails.
    if (!Number.isInteger(port) || port < 1 || port > 65_535)
      throw new Error(`PAYROLL_RESERVED_LOOPBACK_PORTS must be comma-separated port numbers, got "${raw}"`);
    ports.add(port);
  }
  // Deployed, a function's loopback holds Lambda's own Runtime API (AWS_LAMBDA_RUNTIME_API, e.g. 127.0.0.1:9001): a
  // sandbox target there would reach into the function's own runtime.
  const runtime = process.env.AWS_LAMBDA_RUNTIME_API;
  if (runtime) ports.add(Number(/:(\d+)$/.exec(runtime)?.[1] ?? 80));
  return ports;
}

function isLocalhostName(host: string): boolean {
  // RFC 6761: every *.localhost name is loopback, whatever a resolver might claim.
  return host === 'localhost' || host.endsWith('.localhost');
}

function refuse(reason: string): HostCheck {
  return { ok: false, reason };
}
