/**
 * Named domain errors: what went wrong in the domain's own words (a kind, the contract's error code, a message and
 * the problems found). Nothing here knows HTTP: shared/http/error-mapping.ts turns a kind into a status and an
 * error's facts (a required scope, a retry delay) into headers, in one place. Anything else that escapes is a 500.
 */
export interface ProblemDetail {
  field?: string;
  code: string;
  message: string;
  [extra: string]: unknown;
}

/** What kind of refusal: the HTTP layer gives each its status. */
export type ErrorKind =
  | 'invalid' // the request is malformed
  | 'unauthenticated' // no caller could be established
  | 'forbidden' // the caller may not do this
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict' // the current state forbids it
  | 'gone' // it existed and was withdrawn for good
  | 'too_large'
  | 'unprocessable' // well-formed, but refers to what cannot be used
  | 'rate_limited';

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly details: ProblemDetail[] = [],
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InvalidRequestError extends DomainError {
  constructor(details: ProblemDetail[] = [], message = 'Invalid request body') {
    super('invalid', 'invalid_request_body', message, details);
  }
}

export class InvalidQueryError extends DomainError {
  constructor(details: ProblemDetail[]) {
    super('invalid', 'invalid_request_body', 'Invalid request parameters', details);
  }
}

export class UnauthorizedError extends DomainError {
  constructor(
    readonly reason: string,
    /** The key the token belongs to, when it matched one that was then refused (for the audit log). */
    readonly identity?: { organizationId: string; apiKeyId: string },
  ) {
    super('unauthenticated', 'unauthorized', 'Unauthorized');
  }
}

export class MissingCredentialsError extends DomainError {
  readonly reason = 'No bearer token';

  constructor() {
    super('unauthenticated', 'unauthorized', 'Unauthorized');
  }
}

export class InsufficientScopeError extends DomainError {
  constructor(readonly requiredScope: string) {
    super('forbidden', 'insufficient_scope', 'Forbidden: Insufficient scope', [
      {
        code: 'insufficient_scope',
        message: `This route requires the ${requiredScope} scope`,
        required_scope: requiredScope,
      },
    ]);
  }
}

export class NotFoundError extends DomainError {
  constructor(details: ProblemDetail[] = []) {
    super('not_found', 'not_found', 'Not found', details);
  }
}

export class MethodNotAllowedError extends DomainError {
  constructor(readonly allowed: string[]) {
    super('method_not_allowed', 'method_not_allowed', 'Method not allowed');
  }
}

export class EmployeeAlreadyExistsError extends DomainError {
  constructor() {
    super('conflict', 'employee_already_exists', 'Employee already exists', [
      {
        field: 'email',
        code: 'employee_already_exists',
        message: 'An active employee with this email is already onboarded',
      },
    ]);
  }
}

/** A request that did not arrive over an encrypted channel: refused before anything else is looked at. */
export class InsecureTransportError extends DomainError {
  constructor() {
    super('forbidden', 'https_required', 'HTTPS is required');
  }
}

export class InvalidPageTokenError extends DomainError {
  constructor() {
    super('invalid', 'invalid_page_token', 'Invalid page token', [
      {
        field: 'page_token',
        code: 'invalid_page_token',
        message: 'The page token was altered, expired, or belongs to another query',
      },
    ]);
  }
}

export class PayloadTooLargeError extends DomainError {
  constructor(message: string) {
    super('too_large', 'payload_too_large', 'Payload too large', [{ code: 'payload_too_large', message }]);
  }
}

export class ConcurrentModificationError extends DomainError {
  constructor() {
    super('conflict', 'conflict', 'The resource was modified concurrently; retry the request');
  }
}

export class PayrollImmutableError extends DomainError {
  constructor() {
    super('conflict', 'payroll_immutable', 'Payroll is immutable', [
      {
        code: 'payroll_immutable',
        message: 'A submitted payroll cannot be changed: correct it with an off-cycle payroll',
      },
    ]);
  }
}

export class SandboxOnlyError extends DomainError {
  constructor() {
    super('forbidden', 'sandbox_only', 'Cancellation is only available in the sandbox');
  }
}

export class PayrollNotCancellableError extends DomainError {
  /** `because`: why a run in a cancellable status still cannot be (money already came back for it). */
  constructor(status: string, because?: string) {
    super('conflict', 'payroll_not_cancellable', `A ${status} payroll cannot be cancelled`, [
      {
        field: 'status',
        code: 'payroll_not_cancellable',
        message: because
          ? `The run cannot be cancelled: ${because}`
          : status === 'processing'
            ? 'The run is being processed; cancel it once it has completed'
            : `The run is already ${status}`,
      },
    ]);
  }
}

export class RateLimitedError extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super('rate_limited', 'rate_limited', 'Too Many Requests', [
      { code: 'rate_limited', message: `Rate limit exceeded: retry in ${retryAfterSeconds} s` },
    ]);
  }
}

/** The same idempotency key was used, within its lifetime, for a request with another body. */
export class IdempotencyKeyReusedError extends DomainError {
  constructor() {
    super('unprocessable', 'idempotency_key_reused', 'Idempotency key reused with a different request', [
      { code: 'idempotency_key_reused', message: 'This key was used with a different body in the last 24 hours' },
    ]);
  }
}

/** CONTRACT §3: at most 50 active API keys per organization. */
export class ApiKeyLimitReachedError extends DomainError {
  constructor(max: number) {
    super('unprocessable', 'api_key_limit_reached', 'API key limit reached', [
      {
        code: 'api_key_limit_reached',
        message: `An organization may hold at most ${max} active API keys: revoke one you no longer use`,
      },
    ]);
  }
}

/** CONTRACT §3: at most 10 webhook endpoints per organization. */
export class WebhookLimitReachedError extends DomainError {
  constructor(max: number) {
    super('unprocessable', 'webhook_limit_reached', 'Webhook endpoint limit reached', [
      {
        code: 'webhook_limit_reached',
        message: `An organization may register at most ${max} webhook endpoints: delete one you no longer use`,
      },
    ]);
  }
}

/** The file of a run that was cancelled or failed: it existed, or could have, and must not reach a bank. */
export class DisbursementWithdrawnError extends DomainError {
  constructor(status: 'cancelled' | 'failed') {
    super('gone', 'disbursement_withdrawn', 'Disbursement file withdrawn', [
      {
        code: 'disbursement_withdrawn',
        message: `The run was ${status}: its disbursement file is withdrawn and must not be sent to a bank`,
      },
    ]);
  }
}

/** A run that will never have a file (its compliance checks refused it): not the 404 of an unknown id. */
export class NoDisbursementError extends DomainError {
  constructor() {
    super('conflict', 'payroll_rejected', 'The payroll was rejected: it has no disbursement file', [
      { code: 'payroll_rejected', message: 'A rejected run never has a disbursement file: see its findings' },
    ]);
  }
}

/** What stops a run awaiting approval (CONTRACT §11): answered on GET and re-checked at approval. */
export interface Blocker {
  code:
    | 'employee_not_found'
    | 'missing_bank_account'
    | 'originator_not_configured'
    | 'approval_deadline_passed'
    | 'funding_hold';
  message: string;
  employee_id?: string;
  [extra: string]: unknown;
}

export class PayrollNotAwaitingApprovalError extends DomainError {
  constructor(status: string) {
    super('conflict', 'payroll_not_awaiting_approval', 'Payroll is not awaiting approval', [
      { field: 'status', code: 'payroll_not_awaiting_approval', message: `The run is ${status}` },
    ]);
  }
}

export class ApproverIsSubmitterError extends DomainError {
  constructor() {
    super('forbidden', 'approver_is_submitter', 'The approver must not be the submitter', [
      {
        code: 'approver_is_submitter',
        message: 'Dual control: a run is approved by another key (or person) than the one that submitted it',
      },
    ]);
  }
}

export class PayrollBlockedError extends DomainError {
  constructor(blockers: Blocker[]) {
    super('unprocessable', 'payroll_blocked', 'Payroll is blocked', blockers);
  }
}

/** What a funding hold answers: which run's debit came back, and the two ways out. */
export function fundingHoldDetail(hold: { payroll_id: string; code: string; since: string }): ProblemDetail & {
  code: 'funding_hold';
} {
  return {
    field: 'funding',
    code: 'funding_hold',
    payroll_id: hold.payroll_id,
    message: `The funding debit of run ${hold.payroll_id} was returned (${hold.code}) on ${hold.since.slice(0, 10)}: re-debit it (POST /v1/payroll/${hold.payroll_id}/funding/redebit) or record how it was paid (POST /v1/payroll/${hold.payroll_id}/funding/resolve)`,
  };
}

/** CONTRACT §12: new runs and approvals wait while a funding debit of the organization is returned and unresolved. */
export class FundingHoldError extends DomainError {
  /** `details`: the hold first, then anything else that stops the request. */
  constructor(details: ProblemDetail[]) {
    super('unprocessable', 'funding_hold', 'Funding hold', details);
  }
}

/** A re-debit NACHA does not allow: the reason names which rule. */
export class RedebitNotAllowedError extends DomainError {
  constructor(reason: string, message: string) {
    super('unprocessable', 'redebit_not_allowed', 'Re-debit not allowed', [
      { field: 'funding', code: 'redebit_not_allowed', reason, message },
    ]);
  }
}

/** Resolving a funding debit that is not returned (nothing to resolve). */
export class FundingNotReturnedError extends DomainError {
  constructor(status: string) {
    super('conflict', 'funding_not_returned', 'The funding debit is not returned', [
      { field: 'funding.status', code: 'funding_not_returned', message: `The run's funding debit is ${status}` },
    ]);
  }
}

/** A reversal refused: the window closed (422), or a payment already reversed, returned or never paid (409). */
export class ReversalRefusedError extends DomainError {
  constructor(
    code:
      | 'reversal_window_closed'
      | 'already_reversed'
      | 'payment_returned'
      | 'payment_not_reversible'
      | 'paystub_not_found',
    details: ProblemDetail[],
  ) {
    const kind = code === 'reversal_window_closed' || code === 'paystub_not_found' ? 'unprocessable' : 'conflict';
    super(kind, code, REVERSAL_REFUSALS[code], details);
  }
}

const REVERSAL_REFUSALS = {
  reversal_window_closed: 'Reversal window closed',
  already_reversed: 'Payment already reversed',
  payment_returned: 'Payment returned',
  payment_not_reversible: 'Payment not reversible',
  paystub_not_found: 'Paystub not found',
} as const;

/** An operation on the bank link of an organization that has none (`settings.bank_link` is not set). */
export class BankLinkNotConfiguredError extends DomainError {
  constructor() {
    super('conflict', 'bank_link_not_configured', 'Bank link not configured', [
      {
        field: 'bank_link',
        code: 'bank_link_not_configured',
        message: 'The organization has no bank link: set `bank_link` in its settings first',
      },
    ]);
  }
}
