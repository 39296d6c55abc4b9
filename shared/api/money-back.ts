import * as z from 'zod';
import { MAX_REVERSAL_PAYMENTS, REVERSAL_REASONS } from '../domain/money-back.js';
import { resolveFundingBody, reversalBody } from '../schemas/money-back.js';
import { EXAMPLE_IDS, amount, date, id, timestamp, traceNumber } from './common.js';
import { disbursementFile, FILE_EXAMPLE } from './disbursement-files.js';
import { funding, idempotencyHeaders, payrollParams } from './run-declarations.js';
import { routes } from './route.js';

const payrollFunding = z
  .strictObject({ payroll_id: id('pay', EXAMPLE_IDS.payroll), funding })
  .meta({ id: 'PayrollFunding' });

const FUNDING_RETURNED = {
  status: 'returned',
  amount: 2589.5,
  trace_number: '021000020000002',
  effective_entry_date: '2026-11-20',
  return: { code: 'R01', reason: 'Insufficient funds', returned_at: '2026-11-23T14:05:00.000Z' },
  redebits: [],
};

const reversedPayment = z.strictObject({
  paystub_id: id('stub', EXAMPLE_IDS.paystub),
  employee_id: id('emp', EXAMPLE_IDS.employee),
  amount,
  trace_number: traceNumber.meta({ description: 'The original deposit' }),
  reversal_trace_number: traceNumber.meta({ description: 'The reversal debit in the file' }),
  reason: z.enum(REVERSAL_REASONS),
  effective_entry_date: date.meta({ description: 'The day the reversal debit settles' }),
  window_ends: date.meta({ description: 'The last banking day the payment could be reversed' }),
  status: z.enum(['reversal_scheduled', 'reversal_returned']),
  scheduled_at: timestamp,
});

const reversal = z
  .strictObject({
    file: disbursementFile,
    payments: z.array(reversedPayment).max(MAX_REVERSAL_PAYMENTS),
  })
  .meta({ id: 'Reversal' });

const REVERSAL_EXAMPLE = {
  file: {
    ...FILE_EXAMPLE,
    type: 'reversal',
    created_at: '2026-11-23T14:10:00.000Z',
    effective_entry_date: '2026-11-24',
    release_by: '2026-11-23',
    file_id_modifier: 'B',
    reason: 'duplicate',
  },
  payments: [
    {
      paystub_id: EXAMPLE_IDS.paystub,
      employee_id: EXAMPLE_IDS.employee,
      amount: 2589.5,
      trace_number: '021000020000001',
      reversal_trace_number: '021000020000003',
      reason: 'duplicate',
      effective_entry_date: '2026-11-24',
      window_ends: '2026-11-30',
      status: 'reversal_scheduled',
      scheduled_at: '2026-11-23T14:10:00.000Z',
    },
  ],
} satisfies z.input<typeof reversal>;

export const moneyBackRoutes = routes('disbursements', {
  redebitFunding: {
    method: 'POST',
    path: '/v1/payroll/{id}/funding/redebit',
    scope: 'admin',
    bucket: 'payroll_write',
    summary: "Re-debit a run's returned funding debit (R01, R09)",
    access: ['bucket:read', 'bucket:write', 'kms:decrypt:disbursement-file', 'kms:encrypt:disbursement-file'],
    tag: 'Money back',
    description:
      "When the bank returned a run's funding debit for insufficient (R01) or uncollected (R09) funds, writes a `redebit` file: one CCD batch with one debit of the same amount to the same funding account, Company Entry Description `RETRY PYMT` (a re-initiated entry, as NACHA requires it), settling the next banking day. `funding.status` becomes `redebit_scheduled` and the organization's funding hold is lifted; a return of the re-debit puts it back. At most two re-debits per debit, within 180 days of its effective entry date. Admin keys only.",
    params: payrollParams,
    success: [
      {
        status: 200,
        description: "The run's funding, now `redebit_scheduled`",
        schema: payrollFunding,
        envelope: 'PayrollFundingResponse',
        message: 'Funding re-debited',
        example: {
          payroll_id: EXAMPLE_IDS.payroll,
          funding: {
            ...FUNDING_RETURNED,
            status: 'redebit_scheduled',
            redebits: [
              {
                file_id: EXAMPLE_IDS.file,
                trace_number: '021000020000004',
                amount: 2589.5,
                effective_entry_date: '2026-11-24',
                created_at: '2026-11-23T14:10:00.000Z',
              },
            ],
          },
        },
      },
    ],
    errors: {
      404: 'No run with this id in your organization',
      422: '`redebit_not_allowed`: `details[0].reason` says why: `no_funding_debit` (the file carried credits only), `not_returned` (the debit is not returned, or was re-debited or resolved already), `return_code` (returned with a code other than R01 or R09), `limit_reached` (re-debited twice already), `window_closed` (more than 180 days after its effective entry date)',
    },
  },
  resolveFunding: {
    method: 'POST',
    path: '/v1/payroll/{id}/funding/resolve',
    scope: 'admin',
    bucket: 'payroll_write',
    summary: 'Record that a returned funding debit was paid by other means (a wire)',
    access: [],
    tag: 'Money back',
    description:
      "Records that the organization paid the run's returned funding debit another way (a wire, or `other`), with its reference: `funding.status` becomes `resolved` and the funding hold is lifted. Admin keys only.",
    params: payrollParams,
    body: {
      schema: resolveFundingBody,
      example: { method: 'wire', reference: '20261123MMQFMP9T000123' },
    },
    success: [
      {
        status: 200,
        description: "The run's funding, now `resolved`",
        schema: payrollFunding,
        envelope: 'PayrollFundingResponse',
        message: 'Funding resolved',
        example: {
          payroll_id: EXAMPLE_IDS.payroll,
          funding: {
            ...FUNDING_RETURNED,
            status: 'resolved',
            resolution: {
              method: 'wire',
              reference: '20261123MMQFMP9T000123',
              resolved_at: '2026-11-23T16:00:00.000Z',
            },
          },
        },
      },
    ],
    errors: {
      400: 'A missing or malformed `method` or `reference`',
      404: 'No run with this id in your organization',
      409: '`funding_not_returned`: the run has no funding debit, or it is not returned (scheduled, re-debited, or resolved already)',
    },
  },
  reversePayments: {
    method: 'POST',
    path: '/v1/payroll/{id}/reversals',
    scope: 'admin',
    bucket: 'payroll_write',
    summary: 'Reverse payments of a run made in error (duplicate, wrong amount, wrong account)',
    access: [
      'bucket:read',
      'bucket:write',
      'kms:decrypt:disbursement-file',
      'kms:encrypt:disbursement-file',
      'queue:webhooks:send',
    ],
    tag: 'Money back',
    description: `Writes a \`reversal\` file taking back the payments named: Company Entry Description \`REVERSAL\`, the run's company name and id, for each payment a debit of the same amount to the same account as the deposit (27 for a checking credit, 32 → 37 for savings), and in a balanced file one offset credit to the funding account for the total. Each payment becomes \`reversal_scheduled\` and its paystub \`voided\` (year-to-date figures leave it out); \`payment.reversed\` is emitted for each. A return of a reversal debit (POST /v1/disbursement-returns) marks the payment \`reversal_returned\` and emits \`payment.reversal_returned\`.

Allowed until the fifth banking day after the deposit's effective entry date, once per payment, never for a returned deposit; 1 to ${MAX_REVERSAL_PAYMENTS} payments per request, all or none. Of two requests reversing the same payment at once, exactly one writes a file. With an \`Idempotency-Key\`, the same request again answers the first file (\`Idempotent-Replayed: true\`). Admin keys only.`,
    params: payrollParams,
    headers: idempotencyHeaders,
    body: {
      schema: reversalBody,
      example: { reason: 'duplicate', paystub_ids: [EXAMPLE_IDS.paystub] },
    },
    success: [
      {
        status: 201,
        description: "The reversal file, and the payments it takes back; `Location` is the file's URL",
        schema: reversal,
        envelope: 'ReversalResponse',
        message: 'Payments reversed',
        example: REVERSAL_EXAMPLE,
        location: true,
        headers: {
          'Idempotent-Replayed': {
            description: '`true` when this answer replays an earlier request with the same `Idempotency-Key` and body',
            required: false,
          },
        },
      },
    ],
    errors: {
      400: 'A missing or malformed `reason` or `paystub_ids` (empty, more than 40, a paystub twice)',
      404: 'No run with this id in your organization',
      409: '`already_reversed`, `payment_returned` (the bank returned the deposit: the money is back), `payment_not_reversible` (nothing was paid, or the run is not completed); `details` names each paystub',
      422: '`reversal_window_closed` (past the fifth banking day after the deposit settled), `paystub_not_found` (not a paystub of this run), `idempotency_key_reused`',
    },
  },
});
