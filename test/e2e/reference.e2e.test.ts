import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type RunningStack } from '../support/local-stack.js';
import { asReceived, typedClient, type TypedClient } from '../support/typed-client.js';

const ROOT = new URL('../../', import.meta.url);
const committed = JSON.parse(readFileSync(new URL('docs/openapi.json', ROOT), 'utf8')) as { info: { title: string } };

/**
 * The document and the reference are read through the client typed from the document itself (no token: they are
 * public). `stack.request` remains only for what the document does not describe: `/docs/` with its trailing slash
 * and a method the route does not have.
 */
let stack: RunningStack;
let api: TypedClient;

beforeAll(async () => {
  stack = await startLocalStack();
  api = typedClient(stack);
});

afterAll(async () => {
  await stack?.stop();
});

describe('the OpenAPI document and the API reference, served by the API', () => {
  it('serves the document at /v1/openapi.json without a token, as is', async () => {
    const res = await api.GET('/v1/openapi.json');
    expect(res.response.status).toBe(200);
    expect(res.response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.response.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.data).toEqual(committed);
  });

  it('serves the reference page at /docs, the document inline and the renderer beside it', async () => {
    const page = await api.GET('/docs', { parseAs: 'text' });
    expect(page.response.status).toBe(200);
    expect(page.response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.data).toContain('<script src="docs/reference.js"></script>');
    const inline = /<script id="openapi-document" type="application\/json">(.*?)<\/script>/s.exec(page.data!)![1]!;
    expect(JSON.parse(inline)).toEqual(committed);
    // From /docs/ the script is a sibling: relative URLs keep working under a deployed stage prefix too.
    expect((await stack.request('GET', '/docs/')).text).toContain('<script src="reference.js"></script>');

    const script = await api.GET('/docs/reference.js', { parseAs: 'arrayBuffer' });
    expect(script.response.status).toBe(200);
    expect(script.response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.response.headers.get('cache-control')).toBe('public, max-age=86400');
    const bytes = Buffer.from(script.data!);
    expect(bytes.equals(readFileSync(new URL('node_modules/redoc/bundles/redoc.standalone.js', ROOT)))).toBe(true);
    // A Lambda answer is at most 6 MB.
    expect(bytes.length + asReceived(page.response).raw.length).toBeLessThan(6 * 1024 * 1024);
  });

  it('answers other methods with 405, like any route', async () => {
    const res = await stack.request('POST', '/docs', { body: {} });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
  });
});
