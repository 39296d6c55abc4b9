import document from '../../docs/openapi.json' with { type: 'json' };
import { apiHandler } from '../../shared/http/api-handler.js';
import { REFERENCE_PAGE_CSP, referencePage } from '../../shared/http/api-reference.js';
import { routeById } from '../../shared/http/routes.js';

/** The API reference page: the OpenAPI document rendered by Redoc in the browser. No token needed. */
export const handler = apiHandler(routeById.getApiReference, {}, async ({ event }) => ({
  status: 200,
  message: 'OK',
  raw: { body: referencePage(document, event.path), contentType: 'text/html; charset=utf-8' },
  headers: { 'Cache-Control': 'public, max-age=300', 'Content-Security-Policy': REFERENCE_PAGE_CSP },
}));
