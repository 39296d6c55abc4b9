import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { logger } from '../../adapters/logger.js';
import { DomainError } from '../../domain/errors.js';
import { renderError } from '../envelope.js';
import { requestIdOf, type ApiEvent } from './request-context.js';

/**
 * The one place errors become HTTP. middy's stock http-error-handler answers plain text; the contract wants the
 * JSON envelope with the request id, and an unexpected fault logged in full but answered with nothing internal.
 */
export function errorEnvelope(): MiddlewareObj<ApiEvent, APIGatewayProxyResult> {
  return {
    onError: (request) => {
      if (!(request.error instanceof DomainError)) {
        logger.error('unhandled error', { error: request.error as Error });
      }
      request.response = renderError(request.error, requestIdOf(request.event));
    },
  };
}
