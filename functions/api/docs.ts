import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_INDEX, docsRoutes } from '../../shared/api/docs.js';
import { type Endpoint, HTTP_METHODS, type HttpMethod } from '../../shared/api/route.js';
import { apiRouter } from '../../shared/http/api-handler.js';
import { REFERENCE_PAGE_CSP, referencePage } from '../../shared/http/api-reference.js';

/**
 * One of a route's `files`: deployed, it was copied beside the bundle (infra/constructs/payroll-function.ts); run
 * from source (the local stack, tests) it is read where it is, from the repository root.
 */
function routeFile(file: string): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const beside = join(here, basename(file));
  return readFileSync(existsSync(beside) ? beside : join(here, '..', '..', file), 'utf8');
}

interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>;
}

// Read on first use, once per container, rather than bundled or read at load: ~150 KB of JSON and ~1 MB of script
// the 404/405 and CORS answers this function also gives may not need. Served compact; the page per form of its path.
let parsed: OpenApiDocument | undefined;
const parsedDocument = () => (parsed ??= JSON.parse(routeFile(docsRoutes.getOpenApi.files[0])) as OpenApiDocument);
let openapi: string | undefined;
const document = () => (openapi ??= JSON.stringify(parsedDocument()));
const pages = new Map<boolean, string>();
const page = (path: string) => {
  const slash = path.endsWith('/');
  let html = pages.get(slash);
  if (html === undefined) {
    html = referencePage(document(), path);
    pages.set(slash, html);
  }
  return html;
};
let script: string | undefined;

const METHODS = new Set<string>(HTTP_METHODS);

/**
 * Every endpoint of the API, for the 404/405 and CORS answers, read from the OpenAPI document on the first request
 * that needs them. The document is generated from the route declarations (shared/api/routes.ts), so it lists
 * exactly their methods and paths; reading it here, rather than importing the declarations, keeps their zod
 * schemas (about 60 ms of this function's cold start, measured with `npm run bench -- --only cold-start`) out of
 * the function that serves the API's preflights and unknown paths.
 */
export const documentedEndpoints = (): Endpoint[] =>
  Object.entries(parsedDocument().paths)
    .filter(([path]) => path.startsWith('/'))
    .flatMap(([path, operations]) =>
      Object.keys(operations)
        .map((method) => method.toUpperCase())
        .filter((method) => METHODS.has(method))
        .map((method) => ({ method: method as HttpMethod, path })),
    );

/**
 * The API describing itself, no token needed: the OpenAPI document, the reference page and its script. It also
 * answers whatever no route claims (API Gateway sends it ANY on every resource): 404 for an unknown path, 405
 * with Allow for another method, and the CORS preflights.
 *
 * Not wrapped in `observeApi` (shared/adapters/observability.ts), alone of the functions: it makes no AWS call and
 * counts no metric, so tracing would only add the X-Ray SDK to every cold start of its preflights and 404s. Lambda's
 * active tracing still records each of its invocations.
 */
export const handler = apiRouter(
  docsRoutes,
  {
    // The envelope written here, not by the route's schema: this function loads no zod schema (its cold start).
    getIndex: async ({ requestId }) => ({
      status: 200,
      message: 'OK',
      raw: {
        body: JSON.stringify({ status: 200, message: 'OK', data: API_INDEX, request_id: requestId }),
        contentType: 'application/json; charset=utf-8',
      },
      headers: { 'Cache-Control': 'public, max-age=300' },
    }),
    // The document as is, not in the envelope: tools read it from here.
    getOpenApi: async () => ({
      status: 200,
      message: 'OK',
      raw: { body: document(), contentType: 'application/json; charset=utf-8' },
      headers: { 'Cache-Control': 'public, max-age=300' },
    }),
    getApiReference: async ({ event }) => ({
      status: 200,
      message: 'OK',
      raw: { body: page(event.path), contentType: 'text/html; charset=utf-8' },
      headers: { 'Cache-Control': 'public, max-age=300', 'Content-Security-Policy': REFERENCE_PAGE_CSP },
    }),
    getApiReferenceScript: async () => {
      script ??= routeFile(docsRoutes.getApiReferenceScript.files[0]);
      return {
        status: 200,
        message: 'OK',
        raw: { body: script, contentType: 'text/javascript; charset=utf-8' },
        headers: { 'Cache-Control': 'public, max-age=86400' },
      };
    },
  },
  { fallbackRoutes: documentedEndpoints },
);
