import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { InsecureTransportError, InsufficientScopeError } from '../../domain/errors.js';
import { hasScope } from '../../domain/scopes.js';
import type { RouteDef } from '../../api/route.js';
import type { Gate } from '../gate.js';
import type { ApiEvent } from './request-context.js';

function header(event: ApiEvent, name: string): string | undefined {
  const headers = event.headers ?? {};
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : (headers[key] ?? undefined);
}

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

/** HTTPS only, then the bearer token. Runs in every handler, deployed and locally; `authorize` checks the scope. */
export function authenticate(route: RouteDef, gate: Gate | undefined): MiddlewareObj<ApiEvent, APIGatewayProxyResult> {
  return {
    before: async ({ event }) => {
      if (header(event, 'x-forwarded-proto')?.toLowerCase() === 'http') throw new InsecureTransportError();
      if (route.scope === null) return;
      // apiRoute refuses to build such a route; never let one through without a token if that ever changes.
      if (!gate) throw new Error(`Route ${route.id} needs a token and its function has no gate`);
      const principal = await gate.authenticator.authenticate(header(event, 'authorization'));
      event.principal = principal;
      await stampLastUsed(gate, principal.organizationId, principal.apiKeyId);
    },
  };
}

/**
 * The route's scope, checked after the rate limit: a refused scope is still an authenticated request, so it counts
 * against the key's bucket and its answer carries the rate-limit headers like every other.
 */
export function authorize(route: RouteDef): MiddlewareObj<ApiEvent, APIGatewayProxyResult> {
  return {
    before: ({ event }) => {
      if (route.scope === null) return;
      if (!event.principal) throw new Error(`Route ${route.id} reached authorization without a principal`);
      if (!hasScope(event.principal.scopes, route.scope)) {
        throw new InsufficientScopeError(route.scope);
      }
    },
  };
}
