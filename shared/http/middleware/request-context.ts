import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { emitAudit } from '../../adapters/audit-sink.js';
import { logger } from '../../adapters/logger.js';
import { redactFreeText, redactPath } from '../../domain/audit.js';
import { MissingCredentialsError, UnauthorizedError } from '../../domain/errors.js';
import { corsHeaders } from '../cors.js';
import type { Principal } from '../principal.js';

export type ApiEvent = APIGatewayProxyEvent & { principal?: Principal; jsonBody?: unknown; textBody?: string };

/** A request header, whatever the case of its name. */
export function headerOf(event: APIGatewayProxyEvent, name: string): string | undefined {
  const headers = event.headers ?? {};
  const wanted = name.toLowerCase();
  const key = Object.keys(headers).find((k) => k.toLowerCase() === wanted);
  return key === undefined ? undefined : (headers[key] ?? undefined);
}

/**
 * Every value a header was sent with, whatever the case of its name: API Gateway keeps them all in
 * `multiValueHeaders` (one key per spelling), while `headers` keeps one value per spelling.
 */
export function headerValuesOf(event: APIGatewayProxyEvent, name: string): string[] {
  const wanted = name.toLowerCase();
  const multi = event.multiValueHeaders ?? {};
  const fromMulti = Object.keys(multi)
    .filter((k) => k.toLowerCase() === wanted)
    .flatMap((k) => multi[k] ?? []);
  if (fromMulti.length > 0) return fromMulti;
  const headers = event.headers ?? {};
  return Object.keys(headers)
    .filter((k) => k.toLowerCase() === wanted)
    .map((k) => headers[k])
    .filter((v): v is string => v !== undefined);
}

export function requestIdOf(event: APIGatewayProxyEvent): string {
  return event.requestContext?.requestId || 'unknown';
}

/**
 * Sets the request id as the logs' correlation id, stamps X-Request-Id on every response (success or error),
 * and writes one access line per request. The line holds no header, body or query value: those may carry
 * tokens or bank numbers.
 */
/** Every authenticated request and every authentication failure goes to the audit log; anonymous 404s do not. */
function audit(
  event: ApiEvent,
  error: unknown,
  status: number,
  latencyMs: number,
  requestId: string,
  redactedPath: string,
): void {
  const failure = error instanceof UnauthorizedError || error instanceof MissingCredentialsError ? error : undefined;
  if (!event.principal && !failure) return;
  const identity = event.principal
    ? { organizationId: event.principal.organizationId, apiKeyId: event.principal.apiKeyId }
    : failure instanceof UnauthorizedError
      ? failure.identity
      : undefined;
  emitAudit({
    request_id: requestId,
    api_key_id: identity?.apiKeyId ?? null,
    organization_id: identity?.organizationId ?? null,
    method: event.httpMethod,
    // Redacted before the line is written (a token or account number put in a path), and bounded as the audit
    // log stores it: a hostile request must not make its own line unreadable.
    path: redactedPath,
    route: event.requestContext?.resourcePath ?? null,
    status,
    source_ip: event.requestContext?.identity?.sourceIp?.slice(0, 64) ?? null,
    user_agent: redactFreeText(event.requestContext?.identity?.userAgent?.slice(0, 1024) ?? '') || null,
    at: new Date().toISOString(),
    latency_ms: latencyMs,
    auth_failure: failure?.reason ?? null,
  });
}

/** The longest path an audit line keeps. */
const AUDIT_PATH_CHARS = 2048;

/** Keyed by event, not held in the closure: the local stack runs many invocations of one handler at once. */
const startedAt = new WeakMap<object, number>();

export function requestContext(): MiddlewareObj<ApiEvent, APIGatewayProxyResult> {
  const finish = (request: { event: ApiEvent; response: APIGatewayProxyResult | null; error?: unknown }) => {
    const requestId = requestIdOf(request.event);
    if (request.response)
      request.response.headers = { ...request.response.headers, ...corsHeaders(), 'X-Request-Id': requestId };
    const status = request.response?.statusCode ?? 500;
    // Redacted once for both lines when the path is within the audit log's bound, as nearly every path is.
    const rawPath = request.event.path ?? '/';
    const logPath = redactPath(rawPath);
    const auditPath =
      rawPath.length <= AUDIT_PATH_CHARS && rawPath !== ''
        ? logPath
        : redactPath((rawPath || '/').slice(0, AUDIT_PATH_CHARS));
    const line = {
      request_id: requestId,
      method: request.event.httpMethod,
      path: logPath,
      route: request.event.requestContext?.resourcePath,
      status,
      latency_ms: Date.now() - (startedAt.get(request.event) ?? Date.now()),
      api_key_id: request.event.principal?.apiKeyId,
      organization_id: request.event.principal?.organizationId,
    };
    if (status >= 500) logger.error('request failed', line);
    else logger.info('request', line);
    audit(request.event, request.error, status, line.latency_ms, requestId, auditPath);
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
