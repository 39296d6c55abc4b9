/**
 * Named domain errors. Each carries the contract's error code and HTTP status; the HTTP layer maps them to the
 * JSON envelope in exactly one place (shared/http/error-envelope.ts). Anything else that escapes is a 500.
 */
export interface ProblemDetail {
  field?: string;
  code: string;
  message: string;
  [extra: string]: unknown;
}

export class DomainError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ProblemDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InvalidRequestError extends DomainError {
  constructor(details: ProblemDetail[] = [], message = 'Invalid request body') {
    super(400, 'invalid_request_body', message, details);
  }
}

export class InvalidQueryError extends DomainError {
  constructor(details: ProblemDetail[]) {
    super(400, 'invalid_request_body', 'Invalid request parameters', details);
  }
}

export class UnauthorizedError extends DomainError {
  constructor(
    readonly reason: string,
    /** The key the token belongs to, when it matched one that was then refused (for the audit log). */
    readonly identity?: { organizationId: string; apiKeyId: string },
  ) {
    super(401, 'unauthorized', 'Unauthorized', [], {
      'WWW-Authenticate': `Bearer realm="payroll", error="invalid_token", error_description="${reason}"`,
    });
  }
}

export class MissingCredentialsError extends DomainError {
  readonly reason = 'No bearer token';

  constructor() {
    super(401, 'unauthorized', 'Unauthorized', [], { 'WWW-Authenticate': 'Bearer realm="payroll"' });
  }
}

export class InsufficientScopeError extends DomainError {
  constructor(required: string) {
    super(403, 'insufficient_scope', 'Forbidden: Insufficient scope', [
      { code: 'insufficient_scope', message: `This route requires the ${required} scope`, required_scope: required },
    ], { 'WWW-Authenticate': `Bearer realm="payroll", error="insufficient_scope", scope="${required}"` });
  }
}

export class NotFoundError extends DomainError {
  constructor() {
    super(404, 'not_found', 'Not found');
  }
}

export class MethodNotAllowedError extends DomainError {
  constructor(allowed: string[]) {
    super(405, 'method_not_allowed', 'Method not allowed', [], { Allow: allowed.join(', ') });
  }
}

export class EmployeeAlreadyExistsError extends DomainError {
  constructor() {
    super(409, 'employee_already_exists', 'Employee already exists', [
      { field: 'email', code: 'employee_already_exists', message: 'An active employee with this email is already onboarded' },
    ]);
  }
}

export class HttpsRequiredError extends DomainError {
  constructor() {
    super(403, 'https_required', 'HTTPS is required');
  }
}

export class InvalidPageTokenError extends DomainError {
  constructor() {
    super(400, 'invalid_page_token', 'Invalid page token', [
      { field: 'page_token', code: 'invalid_page_token', message: 'The page token was altered, expired, or belongs to another query' },
    ]);
  }
}

export class PayloadTooLargeError extends DomainError {
  constructor(message: string) {
    super(413, 'payload_too_large', 'Payload too large', [{ code: 'payload_too_large', message }]);
  }
}

export class ConcurrentModificationError extends DomainError {
  constructor() {
    super(409, 'conflict', 'The resource was modified concurrently; retry the request');
  }
}

export class PayrollImmutableError extends DomainError {
  constructor() {
    super(409, 'payroll_immutable', 'Payroll is immutable', [
      { code: 'payroll_immutable', message: 'A submitted payroll cannot be changed: correct it with an off-cycle payroll' },
    ]);
  }
}

export class SandboxOnlyError extends DomainError {
  constructor() {
    super(403, 'sandbox_only', 'Cancellation is only available in the sandbox');
  }
}

export class PayrollNotCancellableError extends DomainError {
  constructor(status: string) {
    super(409, 'payroll_not_cancellable', `A ${status} payroll cannot be cancelled`, [
      { field: 'status', code: 'payroll_not_cancellable', message: status === 'processing'
        ? 'The run is being processed; cancel it once it has completed'
        : `The run is already ${status}` },
    ]);
  }
}

export class RateLimitedError extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super(429, 'rate_limited', 'Too Many Requests', [
      { code: 'rate_limited', message: `Rate limit exceeded: retry in ${retryAfterSeconds} s` },
    ], { 'Retry-After': String(retryAfterSeconds) });
  }
}
