import middy from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { MethodNotAllowedError, NotFoundError } from '../../shared/domain/errors.js';
import { errorEnvelope } from '../../shared/http/middleware/error-envelope.js';
import { requestContext, type ApiEvent } from '../../shared/http/middleware/request-context.js';
import { matchPath } from '../../shared/http/routes.js';

/** Unknown path: 404. Known path, other method: 405 with Allow. Both in the JSON envelope, before any auth. */
export const handler = middy<ApiEvent, APIGatewayProxyResult>()
  .use(requestContext())
  .use(errorEnvelope())
  .handler(async (event) => {
    const matches = matchPath(event.path);
    if (matches.length === 0) throw new NotFoundError();
    throw new MethodNotAllowedError(matches.map((m) => m.route.method));
  });
