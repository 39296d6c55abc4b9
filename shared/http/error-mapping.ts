import {
  type DomainError,
  IdempotencyKeyReusedError,
  InsufficientScopeError,
  MethodNotAllowedError,
  MissingCredentialsError,
  RateLimitedError,
  UnauthorizedError,
  type ErrorKind,
  type ProblemDetail,
} from '../domain/errors.js';

const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
};

/** At most this many problems are listed in `details`, then one `too_many_problems` entry says how many more. */
export const MAX_DETAILS = 100;

export interface HttpError {
  status: number;
  headers: Record<string, string>;
  details: ProblemDetail[];
  /** Extra members of the envelope's `error` object. */
  extra: Record<string, unknown>;
}

/** The one place a domain error becomes HTTP: its status, and the headers its facts call for. */
export function httpErrorOf(error: DomainError): HttpError {
  const headers: Record<string, string> = {};
  let details = error.details;
  const extra: Record<string, unknown> = {};
  if (error instanceof UnauthorizedError) {
    // RFC 6750: the challenge names the realm and why the token was refused.
    headers['WWW-Authenticate'] = `Bearer realm="payroll", error="invalid_token", error_description="${error.reason}"`;
  } else if (error instanceof MissingCredentialsError) {
    headers['WWW-Authenticate'] = 'Bearer realm="payroll"';
  } else if (error instanceof InsufficientScopeError) {
    headers['WWW-Authenticate'] = `Bearer realm="payroll", error="insufficient_scope", scope="${error.requiredScope}"`;
  } else if (error instanceof MethodNotAllowedError) {
    headers.Allow = error.allowed.join(', ');
  } else if (error instanceof RateLimitedError) {
    headers['Retry-After'] = String(error.retryAfterSeconds);
    extra.retry_after = error.retryAfterSeconds;
  } else if (error instanceof IdempotencyKeyReusedError) {
    // The key travels in a request header: the problem names it.
    details = details.map((d) => ({ field: 'Idempotency-Key', ...d }));
  }
  if (details.length > MAX_DETAILS) {
    details = [
      ...details.slice(0, MAX_DETAILS),
      { code: 'too_many_problems', message: `…and ${details.length - MAX_DETAILS} more` },
    ];
  }
  return { status: STATUS[error.kind], headers, details, extra };
}
