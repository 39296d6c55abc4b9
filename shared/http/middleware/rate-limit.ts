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
 * The answer of two buckets taken together: allowed only if both allow; the headers describe whichever has less
 * left (a refusing bucket has none), and a refusal waits for the later of the two.
 */
export function combineDecisions(key: RateDecision, org: RateDecision | undefined): RateDecision {
  if (!org) return key;
  const refused = [key, org].filter((d) => !d.allowed);
  const tighter = key.remaining <= org.remaining ? key : org;
  if (refused.length === 0) return tighter;
  const binding = refused.length === 2 ? (key.retryAfterSeconds >= org.retryAfterSeconds ? key : org) : refused[0]!;
  return { ...binding, retryAfterSeconds: Math.max(...refused.map((d) => d.retryAfterSeconds)) };
}

/**
 * Per key and bucket (read, payroll-write, employee-write), then per organization and bucket at
 * `PAYROLL_RATE_LIMIT_ORG_FACTOR` times the key's limit (CONTRACT §3: more keys do not buy more throughput), right
 * after authentication and before any work: a refused request has written nothing but its rate-limit state.
 * The key's bucket is taken first and the organization's only if the key allowed the request, so a key hammering
 * past its own limit spends nothing of its organization's bucket and cannot starve the organization's other keys.
 * (When the organization refuses, the key's cell is spent: a key loses at most the requests its organization
 * refused.) Registered after `authenticate`.
 */
export function rateLimitCheck(bucket: RateBucket, gate: Gate): MiddlewareObj<RateLimitedEvent, APIGatewayProxyResult> {
  return {
    before: async ({ event }) => {
      const limit = perMinute(bucket);
      if (limit <= 0) return;
      const factor = config().PAYROLL_RATE_LIMIT_ORG_FACTOR;
      // `authenticate` runs first and sets the principal, or refuses the request.
      const principal = event.principal!;
      const key = await gate.rateLimits.take(`${principal.apiKeyId}#${bucket}`, { perMinute: limit });
      const org =
        key.allowed && factor > 0
          ? await gate.rateLimits.take(`${principal.organizationId}#${bucket}`, { perMinute: limit * factor })
          : undefined;
      const decision = combineDecisions(key, org);
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
