import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { config } from '../../config/env.js';
import { RateLimitedError } from '../../domain/errors.js';
import type { RateDecision } from '../../domain/rate-limit.js';
import type { RateBucket } from '../../api/route.js';
import type { Gate } from '../gate.js';
import type { ApiEvent } from './request-context.js';

export type RateLimitedEvent = ApiEvent & { rateLimit?: RateDecision };

function perMinute(bucket: RateBucket): number {
  const c = config();
  return {
    read: c.PAYROLL_RATE_LIMIT_READ,
    payroll_write: c.PAYROLL_RATE_LIMIT_PAYROLL_WRITE,
    employee_write: c.PAYROLL_RATE_LIMIT_EMPLOYEE_WRITE,
  }[bucket];
}

/** The spec asks for rotation every 30 to 60 days: past 60, every response says so. */
export const KEY_AGE_WARNING_DAYS = 60;

const stamp = (event: RateLimitedEvent, response: APIGatewayProxyResult | null) => {
  if (!response) return;
  const d = event.rateLimit;
  if (d) {
    response.headers = {
      ...response.headers,
      'X-RateLimit-Limit': String(d.limit),
      'X-RateLimit-Remaining': String(d.remaining),
      'X-RateLimit-Reset': String(d.resetSeconds),
    };
  }
  const issued = event.principal?.tokenIssuedAt;
  const ageDays = issued ? Math.floor((Date.now() - Date.parse(issued)) / 86_400_000) : 0;
  if (ageDays > KEY_AGE_WARNING_DAYS) {
    response.headers = {
      ...response.headers,
      Warning: `299 payroll-api "API key is ${ageDays} days old: rotate it with POST /v1/api-keys/${event.principal!.apiKeyId}/rotate"`,
    };
  }
};
/**
 * Per key and bucket (read, payroll-write, employee-write), right after authentication and before any work: a
 * refused request has written nothing but its rate-limit state. Registered after `authenticate`.
 */
export function rateLimitCheck(bucket: RateBucket, gate: Gate): MiddlewareObj<RateLimitedEvent, APIGatewayProxyResult> {
  return {
    before: async ({ event }) => {
      const limit = perMinute(bucket);
      if (limit <= 0) return;
      // `authenticate` runs first and sets the principal, or refuses the request.
      const decision = await gate.rateLimits.take(`${event.principal!.apiKeyId}#${bucket}`, { perMinute: limit });
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
