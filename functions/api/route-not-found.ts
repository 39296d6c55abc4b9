import middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { MethodNotAllowedError, NotFoundError } from '../../shared/domain/errors.js';
import { corsPreflight } from '../../shared/http/cors.js';
import { errorEnvelope } from '../../shared/http/middleware/error-envelope.js';
import { requestContext, type ApiEvent } from '../../shared/http/middleware/request-context.js';
import { matchPath } from '../../shared/http/routes.js';

/**
 * Unknown path: 404. Known path, other method: 405 with Allow. Both in the JSON envelope, before any auth. A CORS
 * preflight (OPTIONS on a known path) is answered here too when the API serves the dashboard on another origin.
 */
export const handler = middy<ApiEvent, APIGatewayProxyResult>()
  .use(requestContext())
  .use(errorEnvelope())
  .handler(async (event) => {
    const matches = matchPath(event.path);
    if (matches.length === 0) throw new NotFoundError();
    const methods = matches.map((m) => m.route.method);
    const preflight = event.httpMethod === 'OPTIONS' ? corsPreflight(methods) : undefined;
    if (preflight) return preflight;
    throw new MethodNotAllowedError(methods);
  });
