import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A real HTTP receiver on 127.0.0.1. `respond` decides each answer (status), so a test can fail the first attempts
 * and accept a later one. `waitFor` awaits a condition on what arrived, bounded, without sleeping blindly.
 */
export async function startReceiver(respond: (r: Received, index: number) => number = () => 200) {
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const r = { headers: req.headers, body, at: Date.now() };
      received.push(r);
      res.statusCode = respond(r, received.length - 1);
      res.end('ok');
      waiters.splice(0).forEach((w) => w());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    async waitFor(condition: (all: Received[]) => boolean, timeoutMs = 20_000): Promise<Received[]> {
      const deadline = Date.now() + timeoutMs;
      while (!condition(received)) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`receiver: condition not met in ${timeoutMs} ms; got ${received.length} deliveries`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, Math.min(left, 500));
          waiters.push(() => {
            clearTimeout(t);
            r();
          });
        });
      }
      return received;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
