import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { type AddressInfo, connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localCertificate } from '../../local/certificate.js';
import { createApiServer, listen } from '../../local/server.js';

/**
 * The local HTTPS server's limits on what a client may make it read and wait for, over raw TLS connections so a test
 * controls every byte and sees when the server hangs up. A body past 6 MB is refused while it streams, and a client
 * too slow with its headers or body is cut off. The server runs in process: none of these requests reaches a function.
 */
const LIMIT = 6 * 1024 * 1024;
/** The shortened timeout of the second server, so the slow-client tests take about a second each. */
const QUICK_TIMEOUT_MS = 1_000;

let dir: string;
let ca: string;
/** As `npm start` creates it: the 10 s timeouts. */
let server: Server;
/** With QUICK_TIMEOUT_MS for the headers and the whole request. */
let quick: Server;

const portOf = (s: Server) => (s.address() as AddressInfo).port;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'payroll-server-limits-'));
  const tls = await localCertificate(dir);
  ca = tls.cert;
  server = createApiServer(tls);
  quick = createApiServer(tls, { requestTimeoutMs: QUICK_TIMEOUT_MS });
  await Promise.all([listen(server, 0), listen(quick, 0)]);
});

afterAll(async () => {
  for (const s of [server, quick]) {
    s?.closeAllConnections();
    await new Promise<void>((r) => (s ? s.close(() => r()) : r()));
  }
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  /** Lower-cased names. */
  headers: Record<string, string>;
  body: any;
  /** Every byte the server sent, for assertions on what came before the final answer (a 100 Continue). */
  raw: string;
  /** Body bytes the client had written when the answer arrived. */
  sentBefore: number;
}

/**
 * A raw TLS connection to the local server. `answer` settles with the first final (non-1xx) response, `closed` with
 * the milliseconds from connecting to the server's hang-up (or a reset); `sent` counts the body bytes written.
 */
interface RawClient {
  socket: TLSSocket;
  sent: number;
  answer: Promise<Answer>;
  closed: Promise<number>;
  isDone(): boolean;
}

async function open(target: Server): Promise<RawClient> {
  const socket = connect({ host: '127.0.0.1', port: portOf(target), servername: 'localhost', ca });
  await once(socket, 'secureConnect');
  const started = performance.now();
  let raw = '';
  let done = false;
  const client: RawClient = {
    socket,
    sent: 0,
    answer: new Promise<Answer>((resolve, reject) => {
      socket.on('data', (chunk: Buffer) => {
        raw += chunk.toString('latin1');
        const answer = finalAnswer(raw, client.sent);
        if (answer && !done) {
          done = true;
          resolve(answer);
        }
      });
      socket.on('close', () => reject(new Error(`closed without a complete answer; received ${JSON.stringify(raw)}`)));
    }),
    closed: new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now() - started))),
    isDone: () => done || socket.destroyed,
  };
  // A reset after the answer (the server destroys the socket while this side still writes) is expected.
  socket.on('error', () => undefined);
  client.answer.catch(() => undefined);
  return client;
}

/** The first response that is not 1xx, once all of its body (by Content-Length) has arrived. */
function finalAnswer(raw: string, sentBefore: number): Answer | undefined {
  let rest = raw;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const status = Number(statusLine?.split(' ')[1]);
    const headers = Object.fromEntries(
      lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    if (status >= 200) {
      const body = rest.slice(end + 4);
      const length = Number(headers['content-length'] ?? 0);
      if (Buffer.byteLength(body, 'latin1') < length) return undefined;
      return { status, headers, body: JSON.parse(Buffer.from(body, 'latin1').toString('utf8')), raw, sentBefore };
    }
    rest = rest.slice(end + 4);
  }
}

/** Writes `total` body bytes in chunks, honouring back-pressure; stops early once the server answers or hangs up. */
async function streamChunked(client: RawClient, total: number, chunkSize = 256 * 1024): Promise<void> {
  const chunk = Buffer.concat([
    Buffer.from(`${chunkSize.toString(16)}\r\n`),
    Buffer.alloc(chunkSize, 'a'),
    Buffer.from('\r\n'),
  ]);
  const stopped = Promise.race([client.answer, client.closed]).then(
    () => undefined,
    () => undefined,
  );
  while (client.sent < total && !client.isDone()) {
    client.sent += chunkSize;
    // events.once would reject on the reset that follows the server's hang-up: that is an outcome, not a failure.
    if (!client.socket.write(chunk)) await Promise.race([once(client.socket, 'drain').catch(() => undefined), stopped]);
  }
  if (!client.isDone()) client.socket.write('0\r\n\r\n');
}

const head = (lines: string[]) => `${lines.join('\r\n')}\r\n\r\n`;

describe('a body over 6 MB', () => {
  it('is refused with 413 while it streams, before the client has sent it all, and the connection is closed', async () => {
    const client = await open(server);
    client.socket.write(
      head([
        'POST /v1/payroll HTTP/1.1',
        'Host: localhost',
        'Content-Type: application/json',
        'Transfer-Encoding: chunked',
      ]),
    );
    // Four times the limit: the answer must come long before the last byte, however much the socket buffers hold.
    const total = 4 * LIMIT;
    void streamChunked(client, total);
    const answer = await client.answer;
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({
      status: 413,
      error: {
        code: 'payload_too_large',
        details: [{ code: 'payload_too_large', message: `A request body may be at most ${LIMIT} bytes` }],
      },
    });
    expect(answer.headers['x-request-id']).toBe(answer.body.request_id);
    expect(answer.headers.connection).toBe('close');
    // Answered while the client still had bytes to send: the server did not wait for (or read) the whole body.
    expect(answer.sentBefore).toBeGreaterThan(LIMIT);
    expect(answer.sentBefore).toBeLessThan(total);
    // And hung up at once: the client cannot keep it reading. The bound is far under the 10 s request timeout.
    const answeredAt = performance.now();
    await client.closed;
    expect(performance.now() - answeredAt).toBeLessThan(2_000);
  });

  it('declared in Content-Length is refused with 413 before any of it is sent, and the connection is closed', async () => {
    const client = await open(server);
    client.socket.write(
      head([
        'POST /v1/payroll HTTP/1.1',
        'Host: localhost',
        'Content-Type: application/json',
        `Content-Length: ${LIMIT + 1}`,
      ]),
    );
    const answer = await client.answer;
    expect(answer.status).toBe(413);
    expect(answer.body.error).toMatchObject({
      code: 'payload_too_large',
      details: [{ message: `A request body may be at most ${LIMIT} bytes` }],
    });
    expect(answer.headers.connection).toBe('close');
    expect(answer.sentBefore).toBe(0);
    // Closed without waiting for the body that was declared, or for the 10 s request timeout.
    expect(await client.closed).toBeLessThan(2_000);
  });

  it('declared with Expect: 100-continue is refused with 413 instead of being invited', async () => {
    const client = await open(server);
    client.socket.write(
      head([
        'POST /v1/payroll HTTP/1.1',
        'Host: localhost',
        'Content-Type: application/json',
        `Content-Length: ${LIMIT + 1}`,
        'Expect: 100-continue',
      ]),
    );
    const answer = await client.answer;
    expect(answer.raw.startsWith('HTTP/1.1 413 ')).toBe(true);
    expect(answer.body.error.code).toBe('payload_too_large');
    expect(await client.closed).toBeLessThan(2_000);
  });

  it('is read up to exactly 6 MB: a body of the limit reaches the function', async () => {
    const client = await open(server);
    // An unknown path: the docs function answers 404, which shows the body was read whole and handed on.
    client.socket.write(
      head([
        'POST /v1/no-such-route HTTP/1.1',
        'Host: localhost',
        'Content-Type: text/plain',
        'Transfer-Encoding: chunked',
      ]),
    );
    await streamChunked(client, LIMIT);
    const answer = await client.answer;
    expect(answer.status).toBe(404);
    expect(answer.headers.connection).not.toBe('close');
    client.socket.destroy();
  });
});

describe('a slow client', () => {
  it('is given 10 s for its headers and for its whole request by default', () => {
    expect(server.headersTimeout).toBe(10_000);
    expect(server.requestTimeout).toBe(10_000);
  });

  it('that trickles its body after the headers is answered 408 in the envelope and cut off at the timeout', async () => {
    const client = await open(quick);
    client.socket.write(
      head(['POST /v1/payroll HTTP/1.1', 'Host: localhost', 'Content-Type: application/json', 'Content-Length: 1000']),
    );
    // One byte every 100 ms: ten times faster than a slow-loris client needs to be, so the test stays short.
    const trickle = setInterval(() => {
      if (!client.socket.destroyed) {
        client.socket.write('a');
        client.sent += 1;
      }
    }, 100);
    try {
      const answer = await client.answer;
      expect(answer.status).toBe(408);
      expect(answer.body).toMatchObject({ status: 408, error: { code: 'request_timeout' } });
      expect(answer.headers['x-request-id']).toBe(answer.body.request_id);
      expect(answer.headers.connection).toBe('close');
      const closedAt = await client.closed;
      // Not before the timeout, and at most one check interval (a quarter of it) and some slack after.
      expect(closedAt).toBeGreaterThanOrEqual(QUICK_TIMEOUT_MS * 0.9);
      expect(closedAt).toBeLessThan(QUICK_TIMEOUT_MS * 2.5);
    } finally {
      clearInterval(trickle);
    }
  }, 8_000);

  it('that opens a connection and sends nothing is answered 408 and cut off at the timeout', async () => {
    const client = await open(quick);
    const answer = await client.answer;
    expect(answer.status).toBe(408);
    const closedAt = await client.closed;
    expect(closedAt).toBeGreaterThanOrEqual(QUICK_TIMEOUT_MS * 0.9);
    expect(closedAt).toBeLessThan(QUICK_TIMEOUT_MS * 2.5);
  }, 8_000);

  it('that never finishes its TLS handshake is cut off at the timeout', async () => {
    const started = performance.now();
    const socket = netConnect(portOf(quick), '127.0.0.1');
    socket.on('error', () => undefined);
    await once(socket, 'close');
    expect(performance.now() - started).toBeLessThan(QUICK_TIMEOUT_MS * 2.5);
  }, 8_000);

  it('that trickles its headers is answered 408 and cut off at the timeout', async () => {
    const client = await open(quick);
    client.socket.write('GET /v1/employees HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
    const trickle = setInterval(() => client.socket.destroyed || client.socket.write('a'), 100);
    try {
      const answer = await client.answer;
      expect(answer.status).toBe(408);
      expect(answer.body.error.code).toBe('request_timeout');
      const closedAt = await client.closed;
      expect(closedAt).toBeGreaterThanOrEqual(QUICK_TIMEOUT_MS * 0.9);
      expect(closedAt).toBeLessThan(QUICK_TIMEOUT_MS * 2.5);
    } finally {
      clearInterval(trickle);
    }
  }, 8_000);
});
