import { apiHandler } from '../../shared/http/api-handler.js';
import { REFERENCE_PAGE_CSP, referencePage } from '../../shared/http/api-reference.js';
import { readRouteFile } from '../../shared/http/route-files.js';
import { routeById } from '../../shared/http/routes.js';

const route = routeById.getApiReference;
/** The OpenAPI document, read once per container from the file deployed beside the bundle. */
const document: unknown = JSON.parse(readRouteFile(import.meta.url, route.files[0]));

/** The API reference page: the OpenAPI document rendered by Redoc in the browser. No token needed. */
export const handler = apiHandler(route, {}, async ({ event }) => ({
  status: 200,
  message: 'OK',
  raw: { body: referencePage(document, event.path), contentType: 'text/html; charset=utf-8' },
  headers: { 'Cache-Control': 'public, max-age=300', 'Content-Security-Policy': REFERENCE_PAGE_CSP },
}));
