import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { generate } from 'selfsigned';
import { afterEach, describe, expect, it } from 'vitest';
import { checkWebhookUrl, postWebhook, type Resolver } from '../../shared/adapters/webhook-url.js';

// Never real DNS: every name a test uses is answered here, and an unknown name fails as NXDOMAIN would.
const ZONE: Readonly<Record<string, string[]>> = {
  'example.com': ['93.184.216.34'],
  'hooks.example.com': ['93.184.216.34'],
  'rebind.test': ['93.184.216.34', '10.0.0.5'],
  'metadata.test': ['169.254.169.254'],
  'mapped.test': ['::ffff:10.0.0.1'],
  'loopback.test': ['127.0.0.1'],
  'v6-private.test': ['2606:4700:4700::1111', 'fd00::5'],
  empty: [],
};

function zoneResolver(zone: Readonly<Record<string, string[]>> = ZONE): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<string[]> => {
    calls.push(hostname);
    const answer = zone[hostname];
    if (answer === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return [...answer];
  };
  return Object.assign(resolve, { calls });
}

const noDns: Resolver = async (hostname) => {
  throw new Error(`the test did not expect DNS for ${hostname}`);
};

interface Receiver {
  port: number;
  connections: number;
  requests: { headers: http.IncomingHttpHeaders; body: string; servername?: string | false | null }[];
}

const servers: (http.Server | https.Server)[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((done) => {
          server.closeAllConnections();
          server.close(() => done());
        }),
    ),
  );
});

/** A receiver on 127.0.0.1 that records every connection, even ones that never become a request. */
async function startReceiver(
  respond: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  tls?: { key: string; cert: string },
): Promise<Receiver> {
  const receiver: Receiver = { port: 0, connections: 0, requests: [] };
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      receiver.requests.push({
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        ...(tls ? { servername: (req.socket as TLSSocket).servername } : {}),
      });
      respond(req, res);
    });
  };
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  server.on('connection', () => {
    receiver.connections += 1;
  });
  servers.push(server);
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  receiver.port = (server.address() as AddressInfo).port;
  return receiver;
}

async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

async function certificateFor(dnsName: string): Promise<{ key: string; cert: string }> {
  const pems = await generate([{ name: 'commonName', value: dnsName }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      // DNS name only, no IP: the handshake succeeds only if the client sends and checks the hostname, not 127.0.0.1.
      { name: 'subjectAltName', altNames: [{ type: 2, value: dnsName }] },
    ],
  } as Parameters<typeof generate>[1]);
  return { key: pems.private, cert: pems.cert };
}

const payload = JSON.stringify({ type: 'payroll.completed', data: { payrollId: 'pay_1' } });

describe('checkWebhookUrl in production', () => {
  it.each([
    ['http://example.com', /https/],
    ['https://127.0.0.1', /127\.0\.0\.1 is not public/],
    ['https://10.0.0.1', /10\.0\.0\.1 is not public/],
    ['https://169.254.169.254/latest/meta-data', /169\.254\.169\.254 is not public/],
    ['https://[::1]', /::1 is not public/],
    ['https://[::ffff:127.0.0.1]/', /not public/],
    ['https://[fd00::1]/', /not public/],
    ['https://0.0.0.0/', /not public/],
    ['https://2130706433/', /127\.0\.0\.1 is not public/], // the URL parser's canonical form of 127.0.0.1
    ['https://0x7f.1/', /127\.0\.0\.1 is not public/],
    ['https://localhost', /localhost/],
    ['https://LOCALHOST./', /localhost/],
    ['https://api.localhost/', /localhost/],
    ['https://rebind.test', /not public/],
    ['https://metadata.test/latest/meta-data', /not public/],
    ['https://mapped.test/', /not public/],
    ['https://v6-private.test/', /not public/],
    ['https://loopback.test/', /not public/],
    ['https://nxdomain.test/', /did not resolve/],
    ['https://empty/', /did not resolve/],
    ['ftp://x', /http and https/],
    ['file:///etc/passwd', /http and https/],
    ['javascript:alert(1)', /http and https/],
    ['https://user:pass@example.com', /credentials/],
    ['https://user@example.com', /credentials/],
    ['not a url', /not a valid URL/],
    [`https://example.com/${'a'.repeat(2048)}`, /2048/],
  ])('refuses %s', async (raw, reason) => {
    const check = await checkWebhookUrl(raw, 'production', zoneResolver());
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toMatch(reason);
  });

  it('does not name the private address a hostname resolves to, so refusals cannot map internal DNS', async () => {
    const check = await checkWebhookUrl('https://rebind.test/', 'production', zoneResolver());
    expect(check).toEqual({ ok: false, reason: 'hostname resolves to an address that is not public' });
  });

  it('accepts a hostname whose every address is public, without connecting, and drops the fragment', async () => {
    const resolve = zoneResolver();
    const check = await checkWebhookUrl('https://hooks.example.com/payroll?v=1#section', 'production', resolve);
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.url.href).toBe('https://hooks.example.com/payroll?v=1');
    expect(check.addresses).toEqual(['93.184.216.34']);
    expect(resolve.calls).toEqual(['hooks.example.com']);
  });

  it('accepts a public IP literal and any port without DNS', async () => {
    const check = await checkWebhookUrl('https://93.184.216.34:8443/hook', 'production', noDns);
    expect(check.ok && check.addresses).toEqual(['93.184.216.34']);
  });

  it('accepts a URL of exactly 2048 characters', async () => {
    const base = 'https://example.com/';
    const check = await checkWebhookUrl(base + 'a'.repeat(2048 - base.length), 'production', zoneResolver());
    expect(check.ok).toBe(true);
  });
});

describe('checkWebhookUrl in sandbox', () => {
  it.each([
    'http://127.0.0.1:8080/hook',
    'http://localhost:8080/hook',
    'http://[::1]:8080/hook',
    'https://localhost/hook',
    'http://127.1.2.3/',
  ])('accepts loopback %s without asking DNS', async (raw) => {
    const check = await checkWebhookUrl(raw, 'sandbox', noDns);
    expect(check.ok).toBe(true);
  });

  it('pins localhost to loopback instead of trusting the resolver', async () => {
    const check = await checkWebhookUrl(
      'http://localhost:8080/hook',
      'sandbox',
      zoneResolver({ localhost: ['10.0.0.1'] }),
    );
    expect(check.ok && check.addresses).toEqual(['127.0.0.1', '::1']);
  });

  it.each([
    ['http://10.0.0.1/', /http is only allowed to localhost/],
    ['https://10.0.0.1/', /not public/],
    ['http://169.254.169.254/latest/meta-data', /http is only allowed to localhost/],
    ['https://169.254.169.254/latest/meta-data', /not public/],
    ['http://0.0.0.0:8080/', /http is only allowed to localhost/],
    ['http://example.com/', /http is only allowed to localhost/],
    ['https://loopback.test/', /not public/], // only the literal loopback names are exempt, not names that resolve there
    ['https://rebind.test/', /not public/],
    ['http://api.localhost/', /http is only allowed to localhost/],
  ])('refuses %s', async (raw, reason) => {
    const check = await checkWebhookUrl(raw, 'sandbox', zoneResolver());
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toMatch(reason);
  });

  it('still accepts https to a public hostname', async () => {
    const check = await checkWebhookUrl('https://hooks.example.com/payroll', 'sandbox', zoneResolver());
    expect(check.ok).toBe(true);
  });
});

describe('postWebhook against local receivers (sandbox)', () => {
  it('delivers to a 200 receiver with the expected headers and body', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end('thanks'));
    const outcome = await postWebhook(
      `http://localhost:${receiver.port}/hook?tenant=1#ignored`,
      payload,
      { 'webhook-id': 'msg_1', Host: 'evil.internal', 'Content-Length': '1', 'User-Agent': 'spoof' },
      { environment: 'sandbox', resolve: noDns },
    );
    expect(outcome).toMatchObject({ ok: true, status: 200, error: null });
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(0);
    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    expect(request?.body).toBe(payload);
    expect(request?.headers).toMatchObject({
      host: `localhost:${receiver.port}`,
      'user-agent': 'PayrollAPI-Webhooks/1',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(payload)),
      'webhook-id': 'msg_1',
    });
  });

  it('reports a 500 with its status and a short excerpt of the body', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(500).end('boom\r\nInjected: header'));
    const outcome = await postWebhook(
      `http://127.0.0.1:${receiver.port}/hook`,
      payload,
      {},
      { environment: 'sandbox' },
    );
    expect(outcome).toMatchObject({ ok: false, status: 500, error: 'HTTP 500: boom Injected: header' });
  });

  it('never echoes more than about 200 characters of an error body', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(503).end('x'.repeat(100_000)));
    const outcome = await postWebhook(
      `http://127.0.0.1:${receiver.port}/hook`,
      payload,
      {},
      { environment: 'sandbox' },
    );
    expect(outcome.status).toBe(503);
    expect(outcome.error?.startsWith('HTTP 503: xxx')).toBe(true);
    expect(outcome.error?.length).toBeLessThanOrEqual(220);
  });

  it('does not follow a redirect, and the redirect target receives nothing', async () => {
    const target = await startReceiver((_req, res) => res.writeHead(200).end());
    const redirector = await startReceiver((_req, res) =>
      res.writeHead(302, { location: `http://127.0.0.1:${target.port}/stolen` }).end(),
    );
    const outcome = await postWebhook(
      `http://127.0.0.1:${redirector.port}/hook`,
      payload,
      {},
      { environment: 'sandbox' },
    );
    expect(outcome).toMatchObject({ ok: false, status: 302, error: 'redirect 302 not followed' });
    expect(redirector.requests).toHaveLength(1);
    expect(target.connections).toBe(0);
  });

  it('gives up on a receiver that never answers', async () => {
    const receiver = await startReceiver(() => undefined);
    const outcome = await postWebhook(
      `http://127.0.0.1:${receiver.port}/hook`,
      payload,
      {},
      { environment: 'sandbox', timeoutMs: 300 },
    );
    expect(outcome).toMatchObject({ ok: false, status: null, error: 'timeout after 300 ms' });
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(290);
    expect(outcome.latencyMs).toBeLessThan(5_000);
  });

  it('counts the time spent resolving against the same deadline', async () => {
    const hangingResolver: Resolver = () => new Promise<string[]>(() => undefined);
    const outcome = await postWebhook(
      'https://slow-dns.test/hook',
      payload,
      {},
      { environment: 'production', timeoutMs: 300, resolve: hangingResolver },
    );
    expect(outcome).toMatchObject({ ok: false, status: null, error: 'timeout after 300 ms' });
  });

  it('completes against a 10 MB response body', async () => {
    const receiver = await startReceiver((_req, res) =>
      res.writeHead(200, { 'content-length': 10 * 1024 * 1024 }).end(Buffer.alloc(10 * 1024 * 1024, 0x61)),
    );
    const outcome = await postWebhook(
      `http://127.0.0.1:${receiver.port}/hook`,
      payload,
      {},
      { environment: 'sandbox' },
    );
    expect(outcome).toMatchObject({ ok: true, status: 200, error: null });
  });

  it('hangs up on an endless body instead of waiting for the deadline', async () => {
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 0x61);
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const outcome = await postWebhook(
      `http://127.0.0.1:${receiver.port}/hook`,
      payload,
      {},
      { environment: 'sandbox', timeoutMs: 10_000 },
    );
    expect(outcome).toMatchObject({ ok: true, status: 200, error: null });
    expect(outcome.latencyMs).toBeLessThan(5_000);
  });

  it('reports a refused connection', async () => {
    const port = await closedPort();
    const outcome = await postWebhook(`http://127.0.0.1:${port}/hook`, payload, {}, { environment: 'sandbox' });
    expect(outcome).toMatchObject({ ok: false, status: null, error: 'connection refused' });
  });

  it('reports a header it cannot send instead of throwing', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end());
    const outcome = await postWebhook(
      `http://127.0.0.1:${receiver.port}/hook`,
      payload,
      { 'x-bad': 'a\r\nInjected: 1' },
      { environment: 'sandbox' },
    );
    expect(outcome).toMatchObject({ ok: false, status: null, error: 'invalid request header' });
    expect(receiver.connections).toBe(0);
  });

  it('refuses a private address in sandbox without connecting', async () => {
    const outcome = await postWebhook('http://10.0.0.1/hook', payload, {}, { environment: 'sandbox', resolve: noDns });
    expect(outcome).toMatchObject({ ok: false, status: null, error: 'http is only allowed to localhost in sandbox' });
  });
});

describe('postWebhook over TLS to a pinned address', () => {
  it('connects to 127.0.0.1 but verifies the certificate for the hostname', async () => {
    const tls = await certificateFor('localhost');
    const receiver = await startReceiver((_req, res) => res.writeHead(204).end(), tls);
    const outcome = await postWebhook(
      `https://localhost:${receiver.port}/hook`,
      payload,
      {},
      { environment: 'sandbox', ca: tls.cert },
    );
    expect(outcome).toMatchObject({ ok: true, status: 204, error: null });
    expect(receiver.requests[0]?.servername).toBe('localhost');
    expect(receiver.requests[0]?.headers.host).toBe(`localhost:${receiver.port}`);
  });

  it('fails when the certificate is for another name', async () => {
    const tls = await certificateFor('other.test');
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end(), tls);
    const outcome = await postWebhook(
      `https://localhost:${receiver.port}/hook`,
      payload,
      {},
      { environment: 'sandbox', ca: tls.cert },
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.status).toBeNull();
    expect(outcome.error).toMatch(/^TLS error \(/);
    expect(receiver.requests).toHaveLength(0);
  });

  it('fails when the certificate is not trusted', async () => {
    const tls = await certificateFor('localhost');
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end(), tls);
    const outcome = await postWebhook(
      `https://localhost:${receiver.port}/hook`,
      payload,
      {},
      { environment: 'sandbox' },
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatch(/^TLS error \(/);
    expect(receiver.requests).toHaveLength(0);
  });
});

describe('postWebhook in production', () => {
  it('refuses 127.0.0.1 without connecting', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end());
    const outcome = await postWebhook(
      `https://127.0.0.1:${receiver.port}/hook`,
      payload,
      {},
      { environment: 'production', resolve: noDns },
    );
    expect(outcome).toMatchObject({ ok: false, status: null, error: 'address 127.0.0.1 is not public' });
    expect(receiver.connections).toBe(0);
  });

  it('refuses plain http to a local receiver without connecting', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end());
    const outcome = await postWebhook(
      `http://127.0.0.1:${receiver.port}/hook`,
      payload,
      {},
      { environment: 'production', resolve: noDns },
    );
    expect(outcome).toMatchObject({ ok: false, status: null, error: 'production webhooks must use https' });
    expect(receiver.connections).toBe(0);
  });

  it('refuses a name that DNS rebinds to 127.0.0.1, before connecting, asking DNS once', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end());
    const resolve = zoneResolver({ 'rebind.test': ['127.0.0.1'] });
    const outcome = await postWebhook(
      `https://rebind.test:${receiver.port}/hook`,
      payload,
      {},
      { environment: 'production', resolve },
    );
    expect(outcome).toMatchObject({
      ok: false,
      status: null,
      error: 'hostname resolves to an address that is not public',
    });
    expect(resolve.calls).toEqual(['rebind.test']);
    expect(receiver.connections).toBe(0);
  });

  it('refuses a name with one public and one loopback address, connecting to neither', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end());
    const resolve = zoneResolver({ 'split.test': ['93.184.216.34', '127.0.0.1'] });
    const outcome = await postWebhook(
      `https://split.test:${receiver.port}/hook`,
      payload,
      {},
      { environment: 'production', resolve },
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toBe('hostname resolves to an address that is not public');
    expect(receiver.connections).toBe(0);
  });

  it('refuses localhost even when the resolver would say it is public', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end());
    const outcome = await postWebhook(
      `https://localhost:${receiver.port}/hook`,
      payload,
      {},
      {
        environment: 'production',
        resolve: zoneResolver({ localhost: ['93.184.216.34'] }),
      },
    );
    expect(outcome.ok).toBe(false);
    expect(receiver.connections).toBe(0);
  });
});

describe("the local stack's own ports (PAYROLL_RESERVED_LOOPBACK_PORTS)", () => {
  // local/start.ts sets the list for the handlers and workers it runs; here the test sets and restores it.
  const withReserved = async <T>(list: string, run: () => Promise<T>): Promise<T> => {
    const before = process.env.PAYROLL_RESERVED_LOOPBACK_PORTS;
    process.env.PAYROLL_RESERVED_LOOPBACK_PORTS = list;
    try {
      return await run();
    } finally {
      if (before === undefined) delete process.env.PAYROLL_RESERVED_LOOPBACK_PORTS;
      else process.env.PAYROLL_RESERVED_LOOPBACK_PORTS = before;
    }
  };

  it.each([
    'http://127.0.0.1:8000/',
    'http://localhost:8000/hook',
    'https://localhost:8000/hook',
    'http://[::1]:8000/',
    'http://[::ffff:127.0.0.1]:8000/',
    'http://127.0.0.2:8000/',
    'http://localhost./',
  ])('refuses %s as a webhook in sandbox', async (raw) => {
    const check = await withReserved('8000,80', () => checkWebhookUrl(raw, 'sandbox', noDns));
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toMatch(/^port (8000|80) on loopback is one of the stack's own services/);
  });

  it('still accepts every other loopback port', async () => {
    const check = await withReserved('8000', () => checkWebhookUrl('http://127.0.0.1:8001/hook', 'sandbox', noDns));
    expect(check.ok).toBe(true);
  });

  it('checks again at delivery: a URL accepted before its port was reserved is not sent to', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end('engine reply'));
    const url = `http://127.0.0.1:${receiver.port}/hook`;
    expect((await checkWebhookUrl(url, 'sandbox', noDns)).ok).toBe(true);
    const outcome = await withReserved(String(receiver.port), () =>
      postWebhook(url, payload, {}, { environment: 'sandbox' }),
    );
    expect(outcome).toMatchObject({ ok: false, status: null });
    expect(outcome.error).toMatch(/one of the stack's own services/);
    expect(receiver.connections).toBe(0);
  });

  it("refuses the port of a deployed function's own Lambda Runtime API (AWS_LAMBDA_RUNTIME_API)", async () => {
    const before = process.env.AWS_LAMBDA_RUNTIME_API;
    process.env.AWS_LAMBDA_RUNTIME_API = '127.0.0.1:9001';
    try {
      const check = await checkWebhookUrl('http://127.0.0.1:9001/2018-06-01/runtime/init/error', 'sandbox', noDns);
      expect(check.ok).toBe(false);
      expect((await checkWebhookUrl('http://127.0.0.1:9002/hook', 'sandbox', noDns)).ok).toBe(true);
    } finally {
      if (before === undefined) delete process.env.AWS_LAMBDA_RUNTIME_API;
      else process.env.AWS_LAMBDA_RUNTIME_API = before;
    }
  });

  it('fails closed on a malformed list', async () => {
    await withReserved('8000,x', async () => {
      await expect(checkWebhookUrl('http://127.0.0.1:9000/', 'sandbox', noDns)).rejects.toThrow(
        /PAYROLL_RESERVED_LOOPBACK_PORTS must be comma-separated port numbers/,
      );
      const outcome = await postWebhook('http://127.0.0.1:9000/', payload, {}, { environment: 'sandbox' });
      expect(outcome).toMatchObject({ ok: false, error: 'delivery failed' });
    });
  });
});
