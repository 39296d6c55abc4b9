import middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { type Endpoint, pathMatcher } from '../api/route.js';
import { MethodNotAllowedError, NotFoundError } from '../domain/errors.js';
import { corsPreflight } from './cors.js';
import { errorEnvelope } from './middleware/error-envelope.js';
import { requestContext, type ApiEvent } from './middleware/request-context.js';

/**
 * Unknown path: 404. Known path, other method: 405 with Allow. Both in the JSON envelope, before any auth. A CORS
 * preflight (OPTIONS on a known path) is answered here too when the API serves the dashboard on another origin.
 * `endpoints` may be a function, called on the first request that needs them.
 */
export function routeNotFound(endpoints: readonly Endpoint[] | (() => readonly Endpoint[])) {
  const matcher = pathMatcher(endpoints);
  return middy<ApiEvent, APIGatewayProxyResult>()
    .use(requestContext())
    .use(errorEnvelope())
    .handler(async (event) => {
      const methods = matcher.matches(event.path ?? '/').map((m) => m.route.method);
      if (methods.length === 0)
        throw new NotFoundError([
          {
            code: 'unknown_path',
            message:
              'No endpoint has this path: the API reference is at /docs, the OpenAPI document at /v1/openapi.json',
          },
        ]);
      const preflight = event.httpMethod === 'OPTIONS' ? corsPreflight(methods) : undefined;
      if (preflight) return preflight;
      throw new MethodNotAllowedError(methods);
    });
}
