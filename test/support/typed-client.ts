import createClient from 'openapi-fetch';
import type { paths } from './api-types.js';
import type { HttpResponse, RunningStack } from './local-stack.js';

/**
 * A client typed from the OpenAPI document (openapi-typescript types, openapi-fetch calls): paths, parameters,
 * bodies and answers are checked by the compiler. Its requests go through `stack.request`, so they use the
 * stack's certificate and every answer is also checked against the document at run time.
 *
 * The end-to-end tests make every well-formed API call with it. Only a request the document cannot describe stays
 * on `stack.request` (or `stack.plainHttp`): a body the schema rejects, a wrong content type, an unknown path or
 * method, a hostile path, a raw non-API file, plain HTTP. A file that keeps one says why once; none forces invalid
 * input through this client with casts. A missing header or parameter in the generated types is a bug of the
 * document: fix it in shared/schemas/openapi/ and run `npm run openapi`.
 *
 * Headers go in `params.header` (or `headers`) and come back in `response.headers`; `parseAs: 'text'` or
 * `'arrayBuffer'` reads a NACHA file, a page or a PDF.
 */
export function typedClient(stack: RunningStack, token?: string) {
  // Answers are typed as their JSON: the NACHA file, the reference page and a PDF are read with `parseAs`.
  return createClient<paths, 'application/json'>({
    // The origin is only a placeholder: `stack.request` sends to the stack's own port.
    baseUrl: 'https://localhost',
    headers: token ? { Authorization: `Bearer ${token}` } : {},
    fetch: async (request: Request) => {
      const url = new URL(request.url);
      const body = request.body ? await request.text() : undefined;
      const res = await stack.request(request.method, `${url.pathname}${url.search}`, { body, headers: Object.fromEntries(request.headers) });
      const response = new Response(res.status === 204 ? null : new Uint8Array(res.raw), { status: res.status, headers: res.headers });
      received.set(response, res);
      return response;
    },
  });
}

export type TypedClient = ReturnType<typeof typedClient>;

const received = new WeakMap<Response, HttpResponse>();

/**
 * The answer behind a typed call's `response` exactly as it arrived (its text and bytes), for assertions on what
 * the wire carried, such as a secret or an account number that must appear nowhere in it.
 */
export function asReceived(response: Response): HttpResponse {
  const res = received.get(response);
  if (!res) throw new Error('not an answer of the typed client');
  return res;
}
