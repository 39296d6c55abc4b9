import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { vi } from 'vitest';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A real HTTP receiver on 127.0.0.1. `respond` decides each answer (status), so a test can fail the first attempts
 * and accept a later one. `waitFor` awaits a condition on what arrived, bounded (`vi.waitFor`), without sleeping blindly.
 */
export async function startReceiver(respond: (r: Received, index: number) => number = () => 200) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const r = { headers: req.headers, body, at: Date.now() };
      received.push(r);
      res.statusCode = respond(r, received.length - 1);
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    waitFor(condition: (all: Received[]) => boolean, timeoutMs = 20_000): Promise<Received[]> {
      return vi.waitFor(
        () => {
          if (!condition(received))
            throw new Error(`receiver: condition not met in ${timeoutMs} ms; got ${received.length} deliveries`);
          return received;
        },
        { timeout: timeoutMs, interval: 20 },
      );
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
