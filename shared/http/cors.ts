import type { APIGatewayProxyResult } from 'aws-lambda';
import { config } from '../config/env.js';

/**
 * CORS for the developer dashboard, which calls the API from its own origin when deployed. The origin comes from
 * PAYROLL_CORS_ALLOW_ORIGIN (set by the API stack; unset on the local stack, which serves the dashboard itself, so
 * nothing here applies there). Tokens travel in the Authorization header, never in cookies: credentials are never
 * allowed.
 */
export const CORS_ALLOW_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'Idempotency-Key'] as const;

/** Headers a page on another origin may read besides the CORS-safelisted ones. */
export const CORS_EXPOSE_HEADERS = [
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'Location',
  'Warning',
  'Idempotent-Replayed',
  'Content-Disposition',
] as const;

/** How long a browser may reuse a preflight's answer (Chromium caps it at two hours). */
export const CORS_MAX_AGE_SECONDS = 7200;

/** Stamped on every answer of every function (shared/http/middleware/request-context.ts). */
export function corsHeaders(): Record<string, string> {
  const origin = config().PAYROLL_CORS_ALLOW_ORIGIN;
  if (!origin) return {};
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': CORS_EXPOSE_HEADERS.join(', ') };
}

/**
 * The answer to a browser's preflight (OPTIONS) for a path whose routes take `methods`, or undefined when CORS is
 * off. The fallback function answers it: it already receives every method no route claims (ANY on every
 * resource), so preflights cost no extra API Gateway method per resource.
 */
export function corsPreflight(methods: readonly string[]): APIGatewayProxyResult | undefined {
  if (!config().PAYROLL_CORS_ALLOW_ORIGIN) return undefined;
  return {
    statusCode: 204,
    headers: {
      'Access-Control-Allow-Methods': [...new Set(methods)].join(', '),
      'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS.join(', '),
      'Access-Control-Max-Age': String(CORS_MAX_AGE_SECONDS),
      'Cache-Control': 'no-store',
    },
    body: '',
  };
}
