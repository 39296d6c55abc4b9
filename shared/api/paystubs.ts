import * as z from 'zod';
import { PAYMENT_STATUSES } from '../data/paystub-repository.js';
import { REVERSAL_REASONS } from '../domain/money-back.js';
import type { PaystubView } from '../use-cases/paystubs.js';
import { listPaystubsQuery, paystubIdParams } from '../schemas/paystub.js';
import {
  EXAMPLE_IDS,
  acceptHeader,
  accountLast4,
  amount,
  date,
  fits,
  id,
  page,
  printable,
  returnCode,
  returnReason,
  routingNumber,
  timestamp,
  traceNumber,
  type Fits,
} from './common.js';
import { routes } from './route.js';

const yearToDate = z.strictObject({ gross_pay: amount, bonuses: amount, deductions: amount, net_pay: amount }).meta({
  description:
    "The employee's issued paystubs of the same calendar year, up to and including this one (voided ones left out)",
});

const paystubFields = {
  paystub_id: id('stub', EXAMPLE_IDS.paystub),
  employee_id: id('emp', EXAMPLE_IDS.employee),
  payroll_id: id('pay', EXAMPLE_IDS.payroll),
  // `<first_name> <last_name>` of the employee when the run was processed (shared/use-cases/process-payroll.ts).
  employee_name: printable(201),
  period_start: date,
  period_end: date,
  pay_date: date,
  issued_date: date,
  status: z.enum(['issued', 'voided']).meta({
    description:
      '`voided` for a run that was cancelled (sandbox) or failed, or a payment reversed; still readable, and left out of year-to-date figures. A returned deposit leaves the paystub `issued`: the wages were earned (see `payment.status`)',
  }),
  // What the submission allowed: at most 99,999.99 (shared/schemas/payroll.ts).
  hours_worked: z.number().min(0).max(99_999.99),
  gross_pay: amount,
  bonuses: amount,
  deductions: z
    .object({ total: amount.meta({ description: 'The sum of the deductions', example: 760.5 }) })
    .catchall(amount)
    .meta({ description: 'Each named deduction, and `total`', example: { taxes: 640.5, benefits: 120, total: 760.5 } }),
  benefits: amount.meta({ description: 'Repeats the `benefits` deduction (0 without one)' }),
  net_pay: amount,
  payment: z.strictObject({
    method: z.literal('direct_deposit'),
    account_type: z.enum(['checking', 'savings']),
    account_number_last4: accountLast4,
    routing_number: routingNumber,
    trace_number: traceNumber
      .nullable()
      .meta({ description: 'The NACHA trace number of the deposit; `null` when the net pay is zero' }),
    status: z.enum(PAYMENT_STATUSES).meta({
      description:
        '`scheduled`: in the file; `returned`: the bank sent the deposit back (see `return`); `cancelled`: the run was cancelled or failed before its file was released; `no_payment`: zero net pay; `reversal_scheduled`: reversed by the organization (see `reversal`: the paystub is `voided`); `reversal_returned`: the bank returned the reversal debit (the money did not come back)',
    }),
    effective_entry_date: date.nullable().meta({
      description: 'The day the deposit settles (the batch header of the file); `null` when nothing is paid',
    }),
    return: z
      .strictObject({
        code: returnCode,
        reason: returnReason,
        returned_at: timestamp,
      })
      .optional()
      .meta({ description: 'Present once the bank returned the deposit (POST /v1/disbursement-returns)' }),
    reversal: z
      .strictObject({
        reason: z.enum(REVERSAL_REASONS),
        file_id: id('file', EXAMPLE_IDS.file),
        trace_number: traceNumber.meta({ description: "The reversal debit's trace number" }),
        effective_entry_date: date,
        scheduled_at: timestamp,
        window_ends: date.meta({ description: 'The last banking day the payment could be reversed' }),
        return: z
          .strictObject({ code: returnCode, reason: returnReason, returned_at: timestamp })
          .optional()
          .meta({ description: 'The bank returned the reversal debit' }),
      })
      .optional()
      .meta({ description: 'Present once the payment was reversed (POST /v1/payroll/{id}/reversals)' }),
  }),
  // The entry's `notes`: printable text of at most 500 characters (shared/schemas/payroll.ts).
  notes: printable(500).nullable(),
  created_at: timestamp,
};

export const paystub = z.strictObject({ ...paystubFields, year_to_date: yearToDate }).meta({ id: 'Paystub' });
/** A list item is the whole paystub, `year_to_date` included. */
const paystubListItem = paystub;
fits<Fits<PaystubView & { year_to_date: object }, typeof paystub>>(true);

const ITEM = {
  paystub_id: EXAMPLE_IDS.paystub,
  employee_id: EXAMPLE_IDS.employee,
  payroll_id: EXAMPLE_IDS.payroll,
  employee_name: 'Ada Lovelace',
  period_start: '2026-11-01',
  period_end: '2026-11-14',
  pay_date: '2026-11-20',
  issued_date: '2026-11-21',
  status: 'issued',
  hours_worked: 80,
  gross_pay: 3200,
  bonuses: 150,
  deductions: { taxes: 640.5, benefits: 120, total: 760.5 },
  benefits: 120,
  net_pay: 2589.5,
  payment: {
    method: 'direct_deposit',
    account_type: 'checking',
    account_number_last4: '6789',
    routing_number: '021000021',
    trace_number: '021000020000001',
    status: 'scheduled',
    effective_entry_date: '2026-11-20',
  },
  notes: null,
  created_at: '2026-11-21T10:02:25.118Z',
  year_to_date: { gross_pay: 19200, bonuses: 450, deductions: 4563, net_pay: 15087 },
} satisfies z.input<typeof paystubListItem>;

export const paystubRoutes = routes('paystubs', {
  listPaystubs: {
    method: 'GET',
    path: '/v1/paystubs',
    scope: 'read:paystubs',
    bucket: 'read',
    summary: 'List paystubs by employee, payroll and date range',
    access: ['secret:signing'],
    tag: 'Paystubs',
    description:
      'Paystubs of runs that have an outcome, newest pay date first, then by paystub id. Filters combine with AND; `from`/`to` select paystubs whose pay period overlaps the range. An unknown employee or payroll, an unfinished run, or a range with no period gives an empty page.',
    query: listPaystubsQuery,
    success: [
      {
        status: 200,
        description: 'One page',
        schema: page('paystubs', paystubListItem),
        envelope: 'PaystubListResponse',
        example: { paystubs: [ITEM], next_page_token: null },
      },
    ],
    errors: {
      400: 'An invalid value (a date like 2026-02-30, `from` after `to`, an unknown parameter), or an altered or foreign `page_token` (`invalid_page_token`)',
    },
  },
  getPaystub: {
    method: 'GET',
    path: '/v1/paystubs/{id}',
    scope: 'read:paystubs',
    bucket: 'read',
    summary: 'Get a paystub with year-to-date totals, as JSON or PDF',
    access: [],
    tag: 'Paystubs',
    description:
      'One paystub with its year-to-date totals; with `Accept: application/pdf` a printable earnings statement.',
    params: paystubIdParams.extend({
      id: paystubIdParams.shape.id.meta({ description: 'A paystub id', example: EXAMPLE_IDS.paystub }),
    }),
    headers: z.object({
      Accept: acceptHeader
        .optional()
        .meta({ description: '`application/pdf` for the printable statement', example: 'application/pdf' }),
    }),
    success: [
      {
        status: 200,
        description: 'The paystub, or its PDF',
        schema: paystub,
        envelope: 'PaystubResponse',
        example: ITEM,
        alternatives: {
          'application/pdf': {
            description: 'The earnings statement (`Content-Disposition: inline; filename="paystub-stub_….pdf"`)',
            schema: { type: 'string', format: 'binary' },
          },
        },
        headers: {
          'Content-Disposition': {
            description: 'On the PDF: `inline; filename="paystub-<paystub_id>.pdf"`',
            required: false,
          },
        },
      },
    ],
    errors: { 404: 'No paystub with this id in your organization, or its run has no outcome yet' },
  },
});
