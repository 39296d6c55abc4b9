import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';

const ROOT = new URL('../../', import.meta.url);
const committed = JSON.parse(readFileSync(new URL('docs/openapi.json', ROOT), 'utf8')) as { info: { title: string } };

let stack: RunningStack;

beforeAll(async () => {
  stack = await startLocalStack();
});

afterAll(async () => {
  await stack?.stop();
});

describe('the OpenAPI document and the API reference, served by the API', () => {
  it('serves the document at /v1/openapi.json without a token, as is', async () => {
    const res = await stack.request('GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.body).toEqual(committed);
  });

  it('serves the reference page at /docs, the document inline and the renderer beside it', async () => {
    const page = await stack.request('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<script src="docs/reference.js"></script>');
    const inline = /<script id="openapi-document" type="application\/json">(.*?)<\/script>/s.exec(page.text)![1]!;
    expect(JSON.parse(inline)).toEqual(committed);
    // From /docs/ the script is a sibling: relative URLs keep working under a deployed stage prefix too.
    expect((await stack.request('GET', '/docs/')).text).toContain('<script src="reference.js"></script>');

    const script = await stack.request('GET', '/docs/reference.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=86400');
    expect(script.raw.equals(readFileSync(new URL('node_modules/redoc/bundles/redoc.standalone.js', ROOT)))).toBe(true);
    // A Lambda answer is at most 6 MB.
    expect(script.raw.length + page.raw.length).toBeLessThan(6 * 1024 * 1024);
  });

  it('answers other methods with 405, like any route', async () => {
    const res = await stack.request('POST', '/docs', { body: {} });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
  });
});
