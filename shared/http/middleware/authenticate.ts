import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { InsecureTransportError, InsufficientScopeError, UnauthorizedError } from '../../domain/errors.js';
import { hasScope } from '../../domain/scopes.js';
import type { Scope } from '../../domain/scopes.js';
import type { Gate } from '../gate.js';
import { type ApiEvent, headerOf, headerValuesOf } from './request-context.js';

/** Keys this container stamped `last_used_at` on, and when: the stamp is written at most once a minute per key. */
const lastStamped = new Map<string, number>();
const STAMP_EVERY_MS = 60_000;

async function stampLastUsed(gate: Gate, orgId: string, apiKeyId: string): Promise<void> {
  const now = Date.now();
  if (now - (lastStamped.get(apiKeyId) ?? 0) < STAMP_EVERY_MS) return;
  lastStamped.set(apiKeyId, now);
  if (lastStamped.size > 10_000) lastStamped.clear();
  await gate.apiKeys.touchLastUsed(orgId, apiKeyId, new Date(now).toISOString()).catch(() => undefined);
}

/** Every route, with or without a token: a request that reached API Gateway over plain HTTP is refused. */
export function httpsOnly(): MiddlewareObj<ApiEvent, APIGatewayProxyResult> {
  return {
    before: ({ event }) => {
      if (headerOf(event, 'x-forwarded-proto')?.toLowerCase() === 'http') throw new InsecureTransportError();
    },
  };
}

/** The bearer token, on the routes that need one (deployed and locally); `authorize` then checks the scope. */
export function authenticate(gate: Gate): MiddlewareObj<ApiEvent, APIGatewayProxyResult> {
  return {
    before: async ({ event }) => {
      // Two credentials are ambiguous: which one a proxy, a log or this service reads first differs. Refused.
      if (headerValuesOf(event, 'authorization').length > 1)
        throw new UnauthorizedError('Send exactly one Authorization header');
      const principal = await gate.authenticator.authenticate(headerOf(event, 'authorization'));
      event.principal = principal;
      await stampLastUsed(gate, principal.organizationId, principal.apiKeyId);
    },
  };
}

/**
 * The route's scope, checked after the rate limit: a refused scope is still an authenticated request, so it counts
 * against the key's bucket and its answer carries the rate-limit headers like every other.
 */
export function authorize(scope: Scope): MiddlewareObj<ApiEvent, APIGatewayProxyResult> {
  return {
    before: ({ event }) => requireScope(event.principal, scope),
  };
}

/** A further scope a use case needs for what it is about to answer (a representation that holds bank data). */
export function requireScope(principal: { scopes: readonly Scope[] } | undefined, scope: Scope): void {
  if (!principal || !hasScope(principal.scopes, scope)) throw new InsufficientScopeError(scope);
}
