import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';

/**
 * The developer dashboard's static files on the local stack (local/dashboard-files.ts), over HTTPS. The app itself
 * is driven in Chromium by `npm run test:browser`; this needs no browser.
 */
let stack: RunningStack;

interface Raw {
  status: number;
  headers: Record<string, string | undefined>;
  text: string;
}

/**
 * A plain request, not the typed client nor stack.request: the dashboard's files (and `/dashboards`, an unknown path)
 * are outside the OpenAPI document, which those two describe and check answers against.
 */
function get(path: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<Raw> {
  const ca = readFileSync(join(stack.dir, 'tls', 'cert.pem'));
  return new Promise((resolvePromise, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port: stack.state.https_port,
        method: options.method ?? 'GET',
        path,
        headers: options.headers,
        ca,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolvePromise({
            status: res.statusCode ?? 0,
            headers: Object.fromEntries(
              Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]),
            ),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  stack = await startLocalStack();
});

afterAll(async () => {
  await stack?.stop();
});

describe('GET /dashboard', () => {
  it('redirects to the folder, then serves index.html with a strict policy and no caching', async () => {
    const redirect = await get('/dashboard?x=1');
    expect(redirect.status).toBe(308);
    expect(redirect.headers.location).toBe('/dashboard/?x=1');
    const index = await get('/dashboard/');
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(index.headers['cache-control']).toBe('no-cache');
    expect(index.headers['content-security-policy']).toContain("default-src 'self'");
    expect(index.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(index.headers['x-content-type-options']).toBe('nosniff');
    expect(index.text).toContain('<div id="app">');
    // A page of the app (routing is by the hash, but a path without an extension is the app too).
    expect((await get('/dashboard/keys')).text).toBe(index.text);
  });

  it('serves the hashed bundle for good, with its content type and an ETag', async () => {
    const index = await get('/dashboard/');
    const script = /src="\.\/(assets\/app-[^"]+\.js)"/.exec(index.text)![1]!;
    const styles = /href="\.\/(assets\/app-[^"]+\.css)"/.exec(index.text)![1]!;
    const js = await get(`/dashboard/${script}`);
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await get(`/dashboard/${styles}`)).headers['content-type']).toBe('text/css; charset=utf-8');
    const again = await get(`/dashboard/${script}`, { headers: { 'If-None-Match': js.headers.etag! } });
    expect(again.status).toBe(304);
    const head = await get(`/dashboard/${script}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers['content-length']).toBe(js.headers['content-length']);
  });

  it('tells the app to call the API on the same origin', async () => {
    const config = await get('/dashboard/config.json');
    expect(config.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(config.text)).toEqual({ api_base_url: '' });
  });

  it('serves nothing outside the build: no traversal, no unknown file, GET and HEAD only', async () => {
    for (const path of [
      '/dashboard/%2e%2e/package.json',
      '/dashboard/..%2f..%2fpackage.json',
      '/dashboard/assets/../../package.json',
      '/dashboard/assets/nope.js',
      '/dashboard/build.ts',
      '/dashboard/src/main.tsx',
      '/dashboard/%00',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.text, path).not.toContain('"name"');
    }
    expect((await get('/dashboard/%E0%A4%A')).status).toBe(400);
    const post = await get('/dashboard/', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('leaves the API routing alone: /dashboards is an unknown API path', async () => {
    const res = await get('/dashboards');
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toMatchObject({ status: 404, error: { code: 'not_found' } });
  });
});
