import * as z from 'zod';
import { code, EXAMPLE_IDS, id, int32, printable, requestId } from '../shared/api/common.js';
import { SCOPES } from '../shared/domain/scopes.js';
import { MAX_DETAILS } from '../shared/http/error-mapping.js';
import { MAX_FIELD_PATH } from '../shared/schemas/problems.js';

/**
 * What every operation shares: the success and error envelopes (shared/http/envelope.ts), the problem details and
 * the per-status error schemas.
 */
/** One problem of a request: `details[]` lists every one found, not just the first. */
export const problemDetail = z
  .looseObject({
    // Built by fieldPath (shared/schemas/problems.ts): client-given names quoted printable and cut short.
    field: printable(MAX_FIELD_PATH).optional().meta({
      description: 'The field, with entry indexes: `employees[3].hours_worked`',
      example: 'bank_account.routing_number',
    }),
    code: code.meta({
      description:
        'required, invalid_type, invalid_format, invalid_value, invalid_date, invalid_check_digit, too_short, too_long, out_of_range, unknown_field, or an error code',
      example: 'invalid_check_digit',
    }),
    // No pattern and no length: a message may quote what the request carried as it came (an employee id, a
    // record of a bank's file). The OWASP ruleset leaves this one field unchecked: openapi/owasp-ruleset.ts.
    message: z.string().meta({ example: 'Not a valid ABA routing number (check digit)' }),
    reason: code
      .optional()
      .meta({ description: 'Payroll problems: the finer reason (required, out_of_range, duplicate_employee …)' }),
    // The organization's configured values: at most 50 of `text(100)` each (shared/schemas/settings.ts).
    allowed: z.array(printable(100)).max(50).optional().meta({ description: 'The configured values a field may take' }),
    payroll_id: id('pay', EXAMPLE_IDS.payroll).optional().meta({
      description:
        '`duplicate_payroll_window`: the run that holds the window; `funding_hold`: the run whose debit came back',
    }),
    paystub_id: z
      .string()
      .max(64)
      .regex(/^[!-~]+$/)
      .optional()
      .meta({ description: 'A reversal refused: the paystub it is about' }),
    required_scope: z.enum(SCOPES).optional().meta({ description: '`insufficient_scope`: the scope the route needs' }),
  })
  .meta({
    id: 'ProblemDetail',
    description: 'One problem; some codes add fields (`allowed`, `payroll_id`, `reason`, `required_scope`).',
  });

/**
 * The longest wait a 429 asks for: a key's or an organization's bucket refills within a minute
 * (shared/domain/rate-limit.ts), a redelivery waits at most its one-minute interval, and API Gateway's own answers
 * say 1 (throttled) or 60 (quota).
 */
export const MAX_RETRY_AFTER_SECONDS = 60;

/** Every error code, by HTTP status: the service's own and those API Gateway answers itself (infra/api-stack.ts). */
export const ERROR_CODES = {
  400: ['invalid_request_body', 'invalid_page_token', 'invalid_date_range', 'negative_pay', 'bad_request'],
  401: ['unauthorized'],
  403: ['insufficient_scope', 'https_required', 'sandbox_only', 'approver_is_submitter', 'forbidden'],
  404: ['not_found'],
  405: ['method_not_allowed'],
  409: [
    'employee_already_exists',
    'duplicate_payroll_window',
    'payroll_immutable',
    'payroll_not_cancellable',
    'payroll_not_awaiting_approval',
    'payroll_rejected',
    'funding_not_returned',
    'already_reversed',
    'payment_returned',
    'payment_not_reversible',
    'bank_link_not_configured',
    'conflict',
  ],
  410: ['disbursement_withdrawn'],
  413: ['payload_too_large'],
  422: [
    'employee_not_found',
    'missing_bank_account',
    'pay_date_too_soon',
    'originator_not_configured',
    'idempotency_key_reused',
    'payroll_blocked',
    'funding_hold',
    'redebit_not_allowed',
    'reversal_window_closed',
    'paystub_not_found',
    'api_key_limit_reached',
    'webhook_limit_reached',
  ],
  429: ['rate_limited'],
  500: ['internal_error'],
} as const;
export type ErrorStatus = keyof typeof ERROR_CODES;

const error = (status: ErrorStatus, code: string, message: string, details: object[] = [], extra: object = {}) => ({
  status,
  error: { code, message, details, ...extra },
  request_id: EXAMPLE_IDS.request,
});

const ERROR_EXAMPLES: Record<ErrorStatus, unknown> = {
  400: error(400, 'invalid_request_body', 'Invalid request body', [
    {
      field: 'bank_account.routing_number',
      code: 'invalid_check_digit',
      message: 'Not a valid ABA routing number (check digit)',
    },
    {
      field: 'pay_group',
      code: 'invalid_value',
      message: 'Must be one of the configured pay_groups: default',
      allowed: ['default'],
    },
  ]),
  401: error(401, 'unauthorized', 'Unauthorized'),
  403: error(403, 'insufficient_scope', 'Forbidden: Insufficient scope', [
    {
      code: 'insufficient_scope',
      message: 'This route requires the write:payroll scope',
      required_scope: 'write:payroll',
    },
  ]),
  404: error(404, 'not_found', 'Not found'),
  405: error(405, 'method_not_allowed', 'Method not allowed'),
  409: error(409, 'duplicate_payroll_window', 'Duplicate payroll window', [
    {
      field: 'pay_period_start',
      code: 'duplicate_payroll_window',
      payroll_id: EXAMPLE_IDS.payroll,
      message: `A regular payroll for this pay period was already submitted: ${EXAMPLE_IDS.payroll}`,
    },
  ]),
  410: error(410, 'disbursement_withdrawn', 'Disbursement file withdrawn', [
    {
      code: 'disbursement_withdrawn',
      message: 'The run was cancelled: its disbursement file is withdrawn and must not be sent to a bank',
    },
  ]),
  413: error(413, 'payload_too_large', 'Payload too large', [
    { code: 'payload_too_large', message: 'A payroll pays at most 25000 employees' },
  ]),
  422: error(422, 'employee_not_found', 'Employee not found', [
    {
      field: 'employees[0].employee_id',
      code: 'employee_not_found',
      message: `No current employee ${EXAMPLE_IDS.employee} in this organization`,
    },
  ]),
  429: error(
    429,
    'rate_limited',
    'Too Many Requests',
    [{ code: 'rate_limited', message: 'Rate limit exceeded: retry in 12 s' }],
    { retry_after: 12 },
  ),
  500: error(500, 'internal_error', 'Internal server error'),
};

const errorEnvelope = (status: ErrorStatus) => {
  const codes = ERROR_CODES[status];
  return z
    .strictObject({
      status: z.literal(status),
      error: z.strictObject({
        code: z.enum(codes as unknown as [string, ...string[]]).meta({ example: codes[0] }),
        message: printable(200).meta({ example: 'Invalid request body' }),
        // At most MAX_DETAILS problems, then one `too_many_problems` (shared/http/error-mapping.ts).
        details: z.array(problemDetail).max(MAX_DETAILS + 1),
        ...(status === 429
          ? {
              retry_after: int32(0, MAX_RETRY_AFTER_SECONDS).meta({
                description: 'Seconds to wait, as in Retry-After',
                example: 12,
              }),
            }
          : {}),
      }),
      request_id: requestId,
    })
    .meta({
      id: `Error${status}`,
      description: `The error envelope of a ${status} answer.`,
      example: ERROR_EXAMPLES[status],
    });
};

export const ERROR_SCHEMAS = Object.fromEntries(
  (Object.keys(ERROR_CODES) as unknown as ErrorStatus[]).map((s) => [s, errorEnvelope(Number(s) as ErrorStatus)]),
) as Record<ErrorStatus, ReturnType<typeof errorEnvelope>>;

/**
 * `{status, message, data, request_id}` around one view. Each wrapped view is its own component, so generated
 * clients get a precise type per operation.
 */
export function successEnvelope<T extends z.ZodType>(name: string, data: T, message: string) {
  return z
    .strictObject({
      status: int32(200, 299).meta({ example: 200 }),
      message: printable(200).meta({ example: message }),
      data,
      request_id: requestId,
    })
    .meta({ id: name });
}
