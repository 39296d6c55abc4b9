import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { config } from '../../config/env.js';
import { RateLimitedError } from '../../domain/errors.js';
import type { RateDecision } from '../../domain/rate-limit.js';
import { appServices } from '../context.js';
import type { RateBucket, RouteDef } from '../routes.js';
import type { ApiEvent } from './request-context.js';

export type RateLimitedEvent = ApiEvent & { rateLimit?: RateDecision };

function perMinute(bucket: RateBucket): number {
  const c = config();
  return { read: c.PAYROLL_RATE_LIMIT_READ, payroll_write: c.PAYROLL_RATE_LIMIT_PAYROLL_WRITE, employee_write: c.PAYROLL_RATE_LIMIT_EMPLOYEE_WRITE }[bucket];
}

const stamp = (event: RateLimitedEvent, response: APIGatewayProxyResult | null) => {
  const d = event.rateLimit;
  if (!d || !response) return;
  response.headers = {
    ...response.headers,
    'X-RateLimit-Limit': String(d.limit),
    'X-RateLimit-Remaining': String(d.remaining),
    'X-RateLimit-Reset': String(d.resetSeconds),
  };
};
/**
 * Per key and bucket (read, payroll-write, employee-write), right after authentication and before any work: a
 * refused request has written nothing but its rate-limit state. Registered after `authenticate`.
 */
export function rateLimitCheck(route: RouteDef): MiddlewareObj<RateLimitedEvent, APIGatewayProxyResult> {
  return {
    before: async ({ event }) => {
      if (!route.bucket || !event.principal) return;
      const limit = perMinute(route.bucket);
      if (limit <= 0) return;
      const decision = await appServices().rateLimits.take(`${event.principal.apiKeyId}#${route.bucket}`, { perMinute: limit }, Date.now());
      event.rateLimit = decision;
      if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds);
    },
  };
}

/** Every authenticated response carries the headers, errors too: registered before the error envelope, so it runs after it. */
export function rateLimitHeaders(): MiddlewareObj<RateLimitedEvent, APIGatewayProxyResult> {
  return {
    after: ({ event, response }) => stamp(event, response),
    onError: ({ event, response }) => stamp(event, response),
  };
}
