import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { docsRoutes } from '../../shared/api/docs.js';
import { ROUTES } from '../../shared/api/routes.js';
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

// Read on first use, once per container, rather than bundled or read at load: ~150 KB of JSON and ~1 MB of script
// the 404/405 and CORS answers this function also gives never need. Served compact; the page per form of its path.
let openapi: string | undefined;
const document = () => (openapi ??= JSON.stringify(JSON.parse(routeFile(docsRoutes.getOpenApi.files[0]))));
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
  { fallbackRoutes: ROUTES },
);
