import type { APIGatewayProxyResult } from 'aws-lambda';
import { DomainError } from '../domain/errors.js';
import { httpErrorOf } from './error-mapping.js';

/** What a use case answers; the envelope is added here, once. */
export interface ApiResult {
  status: number;
  message: string;
  data?: unknown;
  headers?: Record<string, string>;
  /** A body that is not the JSON envelope (a NACHA file, a PDF), sent as is. */
  raw?: { body: string | Buffer; contentType: string };
}

const BASE_HEADERS = {
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

export function renderSuccess(result: ApiResult, requestId: string): APIGatewayProxyResult {
  if (result.raw) {
    const binary = Buffer.isBuffer(result.raw.body);
    return {
      statusCode: result.status,
      headers: {
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
        ...result.headers,
        'Content-Type': result.raw.contentType,
        'X-Request-Id': requestId,
      },
      body: binary ? (result.raw.body as Buffer).toString('base64') : (result.raw.body as string),
      isBase64Encoded: binary,
    };
  }
  if (result.status === 204) {
    return { statusCode: 204, headers: { ...result.headers, 'X-Request-Id': requestId }, body: '' };
  }
  return {
    statusCode: result.status,
    headers: { ...BASE_HEADERS, ...result.headers, 'X-Request-Id': requestId },
    // Ends with a newline, as text answers do: two calls in a terminal print on two lines.
    body: `${JSON.stringify({
      status: result.status,
      message: result.message,
      data: result.data ?? null,
      request_id: requestId,
    })}\n`,
  };
}

/** Domain errors keep their code and details; anything else becomes a bare 500 with no internals. */
export function renderError(error: unknown, requestId: string): APIGatewayProxyResult {
  const known = error instanceof DomainError;
  const http = known ? httpErrorOf(error) : { status: 500, headers: {}, details: [], extra: {} };
  const body = {
    status: http.status,
    error: {
      code: known ? error.code : 'internal_error',
      message: known ? error.message : 'Internal server error',
      details: http.details,
      ...http.extra,
    },
    request_id: requestId,
  };
  return {
    statusCode: http.status,
    headers: { ...BASE_HEADERS, ...http.headers, 'X-Request-Id': requestId },
    body: `${JSON.stringify(body)}\n`,
  };
}

export const ok = (data: unknown, message = 'OK', headers?: Record<string, string>): ApiResult => ({
  status: 200,
  message,
  data,
  headers,
});
export const created = (data: unknown, location: string, message = 'Created'): ApiResult => ({
  status: 201,
  message,
  data,
  headers: { Location: location },
});
