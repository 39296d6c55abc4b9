import { apiHandler } from '../../shared/http/api-handler.js';
import { readRouteFile } from '../../shared/http/route-files.js';
import { routeById } from '../../shared/http/routes.js';

const route = routeById.getApiReferenceScript;
/** Read once per container (about 1 MB). */
const script = readRouteFile(import.meta.url, route.files[0]);

/** The renderer the reference page loads: Redoc's standalone bundle, served by the API itself (no CDN). */
export const handler = apiHandler(route, {}, async () => ({
  status: 200,
  message: 'OK',
  raw: { body: script, contentType: 'text/javascript; charset=utf-8' },
  headers: { 'Cache-Control': 'public, max-age=86400' },
}));
