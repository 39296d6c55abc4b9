import createClient from 'openapi-fetch';
import type { paths } from './api-types.js';
import type { RunningStack } from './local-stack.js';

/**
 * A client typed from the OpenAPI document (openapi-typescript types, openapi-fetch calls): paths, parameters,
 * bodies and answers are checked by the compiler. Its requests go through `stack.request`, so they use the
 * stack's certificate and every answer is also checked against the document at run time.
 */
export function typedClient(stack: RunningStack, token?: string) {
  return createClient<paths>({
    // The origin is only a placeholder: `stack.request` sends to the stack's own port.
    baseUrl: 'https://localhost',
    headers: token ? { Authorization: `Bearer ${token}` } : {},
    fetch: async (request: Request) => {
      const url = new URL(request.url);
      const body = request.body ? await request.text() : undefined;
      const res = await stack.request(request.method, `${url.pathname}${url.search}`, { body, headers: Object.fromEntries(request.headers) });
      return new Response(res.status === 204 ? null : new Uint8Array(res.raw), { status: res.status, headers: res.headers });
    },
  });
}
