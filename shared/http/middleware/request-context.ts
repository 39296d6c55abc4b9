import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { logger } from '../../adapters/logger.js';
import type { Principal } from '../principal.js';

export type ApiEvent = APIGatewayProxyEvent & { principal?: Principal; jsonBody?: unknown };

export function requestIdOf(event: APIGatewayProxyEvent): string {
  return event.requestContext?.requestId || 'unknown';
}

/**
 * Sets the request id as the logs' correlation id, stamps X-Request-Id on every response (success or error),
 * and writes one access line per request. The line holds no header, body or query value: those may carry
 * tokens or bank numbers.
 */
/** Keyed by event, not held in the closure: the local stack runs many invocations of one handler at once. */
const startedAt = new WeakMap<object, number>();

export function requestContext(): MiddlewareObj<ApiEvent, APIGatewayProxyResult> {
  const finish = (request: { event: ApiEvent; response: APIGatewayProxyResult | null }) => {
    const requestId = requestIdOf(request.event);
    if (request.response) request.response.headers = { ...request.response.headers, 'X-Request-Id': requestId };
    const status = request.response?.statusCode ?? 500;
    const line = {
      request_id: requestId,
      method: request.event.httpMethod,
      path: request.event.path,
      route: request.event.requestContext?.resourcePath,
      status,
      latency_ms: Date.now() - (startedAt.get(request.event) ?? Date.now()),
      api_key_id: request.event.principal?.apiKeyId,
      organization_id: request.event.principal?.organizationId,
    };
    if (status >= 500) logger.error('request failed', line);
    else logger.info('request', line);
  };
  return {
    before: (request) => {
      startedAt.set(request.event, Date.now());
      logger.appendKeys({ request_id: requestIdOf(request.event) });
      logger.setCorrelationId(requestIdOf(request.event));
    },
    after: finish,
    onError: finish,
  };
}
