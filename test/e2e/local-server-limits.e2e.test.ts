import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * What `npm start` wires up around the server and the handlers: the local stack's own ports are refused as webhook
 * targets, and its HTTPS server bounds a slow client (shortened here to 1 s by PAYROLL_LOCAL_REQUEST_TIMEOUT_MS).
 * The server's limits themselves are tested in process: test/integration/local-server-limits.test.ts.
 */
const TIMEOUT_MS = 1_000;

let stack: RunningStack;
let token: string;

beforeAll(async () => {
  stack = await startLocalStack({ env: { PAYROLL_LOCAL_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) } });
  ({ token } = await stack.createOrganization('Server limits'));
});

afterAll(async () => {
  await stack?.stop();
});

const portOf = (endpoint: string) => Number(new URL(endpoint).port);

describe("webhooks to the local stack's own ports", () => {
  it.each([
    ['DynamoDB Local', () => `http://127.0.0.1:${portOf(stack.state.dynamodb_endpoint)}/`],
    ['the SQS and S3 engine', () => `http://localhost:${portOf(stack.state.sqs_endpoint)}/000000000000/payroll`],
    ['the HTTPS API', () => `https://localhost:${stack.state.https_port}/v1/employees`],
    ['the plain-HTTP listener', () => `http://[::1]:${stack.state.http_port}/`],
  ])('are refused for %s: 400 invalid_request_body naming the url', async (_name, url) => {
    const res = await stack.request('POST', '/v1/webhooks', { token, body: { url: url() } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('invalid_request_body');
    expect(res.body.error.details).toEqual([
      expect.objectContaining({
        field: 'url',
        code: 'unsafe_url',
        message: expect.stringMatching(/^port \d+ on loopback is one of the stack's own services/),
      }),
    ]);
  });

  it('still accept an ordinary loopback receiver', async () => {
    const receiver = await startReceiver();
    try {
      const res = await stack.request('POST', '/v1/webhooks', { token, body: { url: receiver.url } });
      expect(res.status, res.text).toBe(201);
      expect(res.body.data.url).toBe(receiver.url);
    } finally {
      await receiver.close();
    }
  });
});

describe('the HTTPS server of npm start', () => {
  it('cuts off a client that trickles its body, answering 408', async () => {
    const ca = readFileSync(join(stack.dir, 'tls', 'cert.pem'));
    const socket = connect({ host: '127.0.0.1', port: stack.state.https_port, servername: 'localhost', ca });
    await once(socket, 'secureConnect');
    socket.on('error', () => undefined);
    const started = performance.now();
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    const closed = once(socket, 'close').then(() => performance.now() - started);
    socket.write(
      'POST /v1/webhooks HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n',
    );
    const trickle = setInterval(() => socket.destroyed || socket.write('a'), 100);
    try {
      const closedAt = await closed;
      expect(closedAt).toBeGreaterThanOrEqual(TIMEOUT_MS * 0.9);
      expect(closedAt).toBeLessThan(TIMEOUT_MS * 2.5);
      expect(received).toMatch(/^HTTP\/1\.1 408 /);
      expect(received).toContain('"code":"request_timeout"');
    } finally {
      clearInterval(trickle);
    }
  }, 8_000);
});
