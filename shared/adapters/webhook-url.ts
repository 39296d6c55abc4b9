/**
 * SSRF-safe webhook delivery: which URLs a tenant may register, and the one HTTP POST to them.
 *
 * The address is resolved once, every resolved address is checked, and the socket is opened to that literal IP
 * (Host header and TLS servername still carry the hostname). Nothing resolves the name a second time, so a DNS
 * answer that changes between the check and the connect (rebinding) cannot steer the request inside the network.
 * node:http is used rather than fetch because fetch offers no way to choose the address it connects to.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP, type Socket } from 'node:net';
import { isLoopbackAddress, isPublicAddress } from '../domain/ip-ranges.js';
import { checkOutboundHost, type HostPolicy, isSandboxLoopback, type Resolver } from './outbound-host.js';

export type { Resolver } from './outbound-host.js';

export type WebhookEnvironment = HostPolicy;

/** `addresses` are the validated IPs, in the resolver's order; postWebhook connects to the first. */
export type UrlCheck = { ok: true; url: URL; addresses: readonly string[] } | { ok: false; reason: string };

export interface WebhookPostOptions {
  environment: WebhookEnvironment;
  /** Total budget: resolution, connect, TLS, request and response. */
  timeoutMs?: number;
  resolve?: Resolver;
  /** Trusted roots replacing the system ones; for tests and the local stack's self-signed receivers. */
  ca?: string | Buffer;
}

export interface WebhookPostOutcome {
  /** True only for a 2xx. */
  ok: boolean;
  status: number | null;
  latencyMs: number;
  /** Short and safe to show the tenant: no stack, no internal address, at most ~200 characters of their body. */
  error: string | null;
}

const MAX_URL_LENGTH = 2048;
const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 64 * 1024;
const MAX_ECHOED_BODY_CHARS = 200;
const USER_AGENT = 'PayrollAPI-Webhooks/1';
/** Headers this module owns; a caller's copy would break framing (length, encoding) or the pinning (host). */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'expect',
  'upgrade',
  'user-agent',
  'content-type',
]);

/**
 * Static checks plus DNS. Production: https only, no credentials, any port, and every address the name resolves
 * to (or the IP literal itself) must be public. Sandbox: the same, and additionally http or https to localhost,
 * 127.0.0.1 or [::1] — loopback only, never private ranges, and never a port of the local stack's own
 * (reservedLoopbackPorts). The fragment is dropped.
 */
export async function checkWebhookUrl(
  raw: string,
  environment: WebhookEnvironment,
  resolve?: Resolver,
): Promise<UrlCheck> {
  if (raw.length > MAX_URL_LENGTH) return refuse(`URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return refuse('only http and https URLs are allowed');
  if (url.username !== '' || url.password !== '') return refuse('credentials in the URL are not allowed');
  url.hash = '';

  // The WHATWG parser has already turned 0x7f.1, 2130706433 and friends into dotted IPv4, and lower-cased the name.
  const host = bareHost(url.hostname);
  if (host === '') return refuse('URL has no host');
  if (url.protocol === 'http:' && !isSandboxLoopback(host, environment)) {
    return refuse(
      environment === 'production'
        ? 'production webhooks must use https'
        : 'http is only allowed to localhost in sandbox',
    );
  }
  const check = await checkOutboundHost(host, portOf(url), environment, { service: 'a webhook receiver', resolve });
  return check.ok ? { ok: true, url, addresses: check.addresses } : refuse(check.reason);
}

/**
 * POST `body` once. Never follows redirects, never throws for network trouble: the outcome says what happened.
 */
export async function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: WebhookPostOptions,
): Promise<WebhookPostOutcome> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const started = performance.now();
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const outcome = (status: number | null, error: string | null): WebhookPostOutcome => ({
    ok: status !== null && status >= 200 && status < 300 && error === null,
    status,
    latencyMs: Math.round(performance.now() - started),
    error,
  });
  const timeoutMessage = `timeout after ${timeoutMs} ms`;
  try {
    const check = await beforeDeadline(checkWebhookUrl(url, options.environment, options.resolve), deadline.signal);
    if (check === 'timed-out') return outcome(null, timeoutMessage);
    if (!check.ok) return outcome(null, check.reason);
    const address = check.addresses[0];
    if (address === undefined) return outcome(null, 'hostname did not resolve');
    const result = await send({
      url: check.url,
      address,
      body,
      headers,
      ca: options.ca,
      signal: deadline.signal,
      allowLoopback: options.environment === 'sandbox' && isLoopbackAddress(address),
    });
    return outcome(result.status, result.timedOut ? timeoutMessage : result.error);
  } catch {
    // Only reachable through a bug or a hostile resolver; the contract is to report, not to throw.
    return outcome(null, 'delivery failed');
  } finally {
    clearTimeout(timer);
  }
}

interface SendInput {
  url: URL;
  address: string;
  body: string;
  headers: Record<string, string>;
  ca: string | Buffer | undefined;
  signal: AbortSignal;
  allowLoopback: boolean;
}

interface SendResult {
  status: number | null;
  error: string | null;
  timedOut: boolean;
}

function send(input: SendInput): Promise<SendResult> {
  const { url, address, body, signal } = input;
  return new Promise<SendResult>((settle) => {
    let settled = false;
    let request: http.ClientRequest | undefined;
    const finish = (result: SendResult): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      request?.destroy();
      settle(result);
    };
    // A response that has begun keeps its status: the receiver answered, only the body was slow.
    let status: number | null = null;
    let snippet = '';
    const onAbort = (): void =>
      finish(status === null ? { status: null, error: null, timedOut: true } : bodyOutcome(status, snippet));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });

    const secure = url.protocol === 'https:';
    const hostname = bareHost(url.hostname);
    const options: https.RequestOptions = {
      host: address,
      port: portOf(url),
      method: 'POST',
      path: `${url.pathname}${url.search}`,
      headers: {
        ...callerHeaders(input.headers),
        host: url.host,
        'user-agent': USER_AGENT,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      },
      // A fresh connection each time: a pooled socket could outlive the check that allowed it.
      agent: false,
      // An IP literal has no SNI (RFC 6066); the certificate is then checked against the IP itself.
      ...(secure
        ? { servername: isIP(hostname) === 0 ? hostname : '', ...(input.ca === undefined ? {} : { ca: input.ca }) }
        : {}),
    };

    try {
      request = (secure ? https : http).request(options);
    } catch {
      // Node refuses header names or values with control characters before any socket is opened.
      return finish({ status: null, error: 'invalid request header', timedOut: false });
    }
    request.on('socket', (socket: Socket) => {
      // Defence in depth for the pin: runs before Node flushes the queued request onto the new connection.
      socket.prependOnceListener('connect', () => {
        const remote = socket.remoteAddress ?? '';
        if (!isPublicAddress(remote) && !(input.allowLoopback && isLoopbackAddress(remote))) {
          finish({ status: null, error: 'connected address is not allowed', timedOut: false });
        }
      });
    });
    request.on('error', (error) =>
      finish(
        status === null
          ? { status: null, error: describeNetworkError(error), timedOut: false }
          : bodyOutcome(status, snippet),
      ),
    );
    request.on('response', (response) => {
      status = response.statusCode ?? null;
      if (status === null) return finish({ status: null, error: 'malformed response', timedOut: false });
      if (status >= 300 && status < 400)
        return finish({ status, error: `redirect ${status} not followed`, timedOut: false });
      // Keep at most 64 KB, then hang up rather than drain: the connection is never reused (agent: false), so
      // draining would only let a hostile receiver hold this worker until the deadline.
      let kept = 0;
      const decoder = new TextDecoder('utf-8', { fatal: false });
      response.on('data', (chunk: Buffer) => {
        const room = MAX_RESPONSE_BYTES - kept;
        if (room > 0) {
          const part = chunk.subarray(0, room);
          kept += part.length;
          if (snippet.length < MAX_ECHOED_BODY_CHARS * 4) snippet += decoder.decode(part, { stream: true });
        }
        if (kept >= MAX_RESPONSE_BYTES) finish(bodyOutcome(status as number, snippet));
      });
      response.on('end', () => finish(bodyOutcome(status as number, snippet)));
      response.on('error', () => finish(bodyOutcome(status as number, snippet)));
      response.on('aborted', () => finish(bodyOutcome(status as number, snippet)));
    });
    request.end(body);
  });
}

function bodyOutcome(status: number, body: string): SendResult {
  if (status >= 200 && status < 300) return { status, error: null, timedOut: false };
  const excerpt = printable(body);
  return { status, error: excerpt === '' ? `HTTP ${status}` : `HTTP ${status}: ${excerpt}`, timedOut: false };
}

/** The receiver's words, flattened to one line of printable text and cut short, so they are safe to store and show. */
function printable(text: string): string {
  const flat = text
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = Array.from(flat);
  return chars.length <= MAX_ECHOED_BODY_CHARS ? flat : `${chars.slice(0, MAX_ECHOED_BODY_CHARS).join('')}…`;
}

const NETWORK_ERRORS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
  HPE_INVALID_CONSTANT: 'malformed HTTP response',
  HPE_HEADER_OVERFLOW: 'response headers too large',
};

/** Only the error code reaches the outcome: messages can carry addresses and paths the tenant has no business seeing. */
function describeNetworkError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string' || !/^[A-Z0-9_]{1,64}$/.test(code)) return 'network error';
  const known = NETWORK_ERRORS[code];
  if (known !== undefined) return known;
  if (/CERT|TLS|SSL|EPROTO/.test(code)) return `TLS error (${code})`;
  if (code.startsWith('HPE_')) return 'malformed HTTP response';
  return `network error (${code})`;
}

function callerHeaders(headers: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!RESERVED_HEADERS.has(name.toLowerCase())) kept[name] = value;
  }
  return kept;
}

function beforeDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T | 'timed-out'> {
  if (signal.aborted) return Promise.resolve('timed-out');
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve('timed-out');
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** The port a URL connects to: its own, or its scheme's default (the WHATWG parser drops a default port given). */
function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

function bareHost(hostname: string): string {
  const unbracketed = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  // "localhost." is the same name as "localhost"; without this the trailing dot would dodge the comparison.
  return unbracketed.endsWith('.') ? unbracketed.slice(0, -1) : unbracketed;
}

function refuse(reason: string): UrlCheck {
  return { ok: false, reason };
}
