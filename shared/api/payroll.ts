import * as z from 'zod';
import { MAX_EMPLOYEES_PER_PAYROLL } from '../domain/payroll.js';
import { PAYROLL_STATUSES } from '../domain/payroll-status.js';
import { ACCEPTED_STATUSES } from '../use-cases/payroll-view.js';
import type { payrollView } from '../use-cases/payroll-view.js';
import type { SubmitOutcome } from '../use-cases/submit-payroll.js';
import { listPayrollsQuery, payrollBodySchemas, submitPayrollQuery } from '../schemas/payroll.js';
import {
  EXAMPLE_IDS,
  acceptHeader,
  amount,
  code,
  date,
  fits,
  id,
  int32,
  page,
  printable,
  timestamp,
  totals,
  type Fits,
} from './common.js';
import { routes, type RouteDef } from './route.js';
import {
  effectiveEntryDate,
  exampleFile,
  funding,
  idempotencyHeaders,
  MAX_FILE_BLOCKS,
  MAX_FILE_ENTRIES,
  NACHA_FILE,
  payrollParams,
} from './run-declarations.js';

/** The body `validatePayrollBody` checks: its header schema with the entries it validates one by one. */
const submitPayrollBody = payrollBodySchemas.header
  .extend({
    employees: z
      .array(payrollBodySchemas.entry)
      .min(1)
      .max(MAX_EMPLOYEES_PER_PAYROLL)
      .meta({ description: 'An employee at most once' }),
  })
  .meta({ id: 'PayrollSubmission' });

const payrollType = z.enum(['regular', 'off_cycle']);
const approveBy = timestamp.nullable().meta({
  description:
    "A run awaiting approval: the instant it must be approved by (its `release_by` day at the organization's `approval_cutoff_time`, New York time); in production a run not approved by then is blocked (`approval_deadline_passed`). Null when approval is automatic.",
});
const releaseBy = date.meta({
  description:
    'The banking day before `effective_entry_date`: the file must reach the bank by then (in production a pay date whose `release_by` is past is refused with 422 `pay_date_too_soon`)',
});
const contentHash = z
  .string()
  .max(64)
  .regex(/^[0-9a-f]{64}$/)
  .meta({ description: 'SHA-256 of the canonical body: what idempotency compares' });
const payrollId = id('pay', EXAMPLE_IDS.payroll);
/** The codes of compliance findings (shared/domain/compliance.ts). */
const FINDING_CODES: string[] = [
  'employee_not_found',
  'missing_bank_account',
  'employee_not_started',
  'net_pay_cap_exceeded',
  'simulated_rejection',
  'payroll_total_cap_exceeded',
];

/** A run pays each of at most MAX_EMPLOYEES_PER_PAYROLL employees once, each one the organization's (422 otherwise). */
const employeeIds = z.array(id('emp', EXAMPLE_IDS.employee)).max(MAX_EMPLOYEES_PER_PAYROLL);
const employeeCount = int32(1, MAX_EMPLOYEES_PER_PAYROLL);

/** The run, its period and its settlement dates: the same in what a submission answers and in the summary. */
const runPeriod = {
  type: payrollType,
  pay_period_start: date,
  pay_period_end: date,
  pay_date: date,
  effective_entry_date: effectiveEntryDate,
  release_by: releaseBy,
};

const submittedPayroll = z
  .strictObject({
    payroll_id: payrollId,
    status: z.enum(ACCEPTED_STATUSES).meta({
      description: '`pending` when approval is automatic, `awaiting_approval` when the organization requires it',
    }),
    approve_by: approveBy,
    ...runPeriod,
    employee_ids: employeeIds,
    employee_count: employeeCount,
    totals,
    content_hash: contentHash,
    created_at: timestamp,
  })
  .meta({
    id: 'SubmittedPayroll',
    description: 'What a submission answers, and every replay of it: only what cannot change afterwards',
  });
fits<Fits<ReturnType<typeof payrollView.submitted>, typeof submittedPayroll>>(true);

const dryRun = submittedPayroll
  .omit({ payroll_id: true, status: true, approve_by: true, created_at: true })
  .meta({ id: 'PayrollDryRun', description: 'The computed totals; nothing was stored' });
fits<Fits<Extract<SubmitOutcome, { kind: 'dry_run' }>['data'], typeof dryRun>>(true);

const progress = z
  .strictObject({ total: int32(0, MAX_EMPLOYEES_PER_PAYROLL), done: int32(0, MAX_EMPLOYEES_PER_PAYROLL) })
  .meta({ description: 'Entries written so far' });

const payrollSummary = z
  .strictObject({
    payroll_id: payrollId,
    status: z.enum(PAYROLL_STATUSES),
    ...runPeriod,
    employee_count: employeeCount,
    totals,
    progress,
    approve_by: approveBy,
    content_hash: contentHash,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'PayrollSummary' });
fits<Fits<ReturnType<typeof payrollView.summary>, typeof payrollSummary>>(true);

const disbursementTotals = {
  entry_count: int32(0, MAX_FILE_ENTRIES),
  entry_hash: z
    .string()
    .max(10)
    .regex(/^\d{10}$/)
    .meta({ description: 'The NACHA entry hash' }),
  total_credit: z.number().min(0).meta({ description: 'The deposits to employees' }),
  total_debit: z.number().min(0).meta({
    description:
      'The offset debit to the funding account: equal to `total_credit` in a balanced file, 0 without a funding account',
  }),
  batch_count: int32(0, 1),
  block_count: int32(0, MAX_FILE_BLOCKS),
  file_id_modifier: z
    .string()
    .max(1)
    .regex(/^[A-Z0-9]$/)
    .meta({ description: 'A–Z then 0–9: the n-th file of the organization to this destination on its creation date' }),
  effective_entry_date: effectiveEntryDate,
  created_at: timestamp,
  file_id: id('file', EXAMPLE_IDS.file)
    .nullable()
    .meta({ description: 'The file in the list of files (`GET /v1/disbursement-files/{id}`)' }),
};

const blocker = z
  .object({
    code: z.enum([
      'employee_not_found',
      'missing_bank_account',
      'originator_not_configured',
      'approval_deadline_passed',
      'funding_hold',
    ]),
    message: printable(1000),
    payroll_id: payrollId.optional().meta({ description: '`funding_hold`: the run whose debit was returned' }),
    employee_id: id('emp', EXAMPLE_IDS.employee).optional(),
    field: z
      .string()
      .max(100)
      .regex(/^(originator\.[a-z_]+|funding)$/)
      .optional(),
    earliest_pay_date: date.optional(),
  })
  .meta({ id: 'PayrollBlocker', description: 'What stops a run awaiting approval' });

const keyRef = z.strictObject({ api_key_id: id('key', EXAMPLE_IDS.apiKey) });

const payroll = payrollSummary
  .extend({
    employee_ids: employeeIds,
    blockers: z
      .array(blocker)
      .max(MAX_EMPLOYEES_PER_PAYROLL + 10)
      .nullable()
      .meta({
        description:
          'A run awaiting approval: what stops it now (an empty list: it can be approved); null in any other status',
      }),
    net_pay_by_employee: z
      .array(z.strictObject({ employee_id: id('emp', EXAMPLE_IDS.employee), net_pay: amount }))
      .max(MAX_EMPLOYEES_PER_PAYROLL)
      .nullable()
      .meta({
        description:
          'A run awaiting approval: what it will pay each employee (net pay, in submission order), so the approver sees every amount before money moves; null in any other status',
      }),
    submitted_by: keyRef.nullable().meta({ description: 'The API key that submitted the run' }),
    approved_by: keyRef
      .extend({ at: timestamp })
      .nullable()
      .meta({ description: 'Who approved the run and when (null when approval was automatic, or not yet)' }),
    // The state machine never goes back (shared/domain/payroll-status.ts): each status at most once.
    status_history: z
      .array(
        z.strictObject({
          status: z.enum(PAYROLL_STATUSES),
          at: timestamp,
          // The service's own words: a cancellation, a rejection's first finding, a failure.
          reason: printable(1000).nullable(),
        }),
      )
      .max(PAYROLL_STATUSES.length),
    // shared/domain/compliance.ts: at most 4 findings per entry (no bank account, not started, over the cap,
    // simulated), and 1 for the run's total.
    findings: z
      .array(
        z.strictObject({
          code: code.meta({ enum: FINDING_CODES }),
          message: printable(1000),
          employee_id: id('emp', EXAMPLE_IDS.employee).nullable(),
        }),
      )
      .max(4 * MAX_EMPLOYEES_PER_PAYROLL + 1)
      .meta({ description: 'Why a `rejected` run failed its compliance checks' }),
    disbursement: z
      .strictObject(disbursementTotals)
      .nullable()
      .meta({ description: "The NACHA file's control totals, once written" }),
    returns: z
      .strictObject({ count: int32(0, MAX_EMPLOYEES_PER_PAYROLL), amount })
      .meta({ description: 'Deposits of the run the bank returned (POST /v1/disbursement-returns), and their total' }),
    funding: funding
      .nullable()
      .meta({ description: 'A balanced run (the organization has a funding account): its debit; null otherwise' }),
    reversals: z
      .strictObject({ count: int32(0, MAX_EMPLOYEES_PER_PAYROLL), amount })
      .meta({ description: 'Payments of the run reversed (POST /v1/payroll/{id}/reversals), and their total' }),
    failure_reason: printable(1000).nullable(),
  })
  .meta({ id: 'Payroll' });
fits<Fits<ReturnType<typeof payrollView.full>, typeof payroll>>(true);

const disbursement = z.strictObject({ payroll_id: payrollId, ...disbursementTotals }).meta({ id: 'Disbursement' });

const TOTALS = { gross_pay: 3200, bonuses: 150, deductions: 760.5, net_pay: 2589.5 };
const HASH = '9e83f1c4be8e2a1d5f6c7b8a9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f7a8b9c0';
const SUBMITTED = {
  payroll_id: EXAMPLE_IDS.payroll,
  status: 'pending',
  type: 'regular',
  pay_period_start: '2026-11-01',
  pay_period_end: '2026-11-14',
  pay_date: '2026-11-20',
  effective_entry_date: '2026-11-20',
  release_by: '2026-11-19',
  employee_ids: [EXAMPLE_IDS.employee],
  employee_count: 1,
  totals: TOTALS,
  content_hash: HASH,
  created_at: '2026-11-17T15:02:21.004Z',
  approve_by: null,
} satisfies z.input<typeof submittedPayroll>;
const { payroll_id: _id, status: _status, approve_by: _approveBy, created_at: _created, ...DRY_RUN } = SUBMITTED;
const SUMMARY = {
  payroll_id: EXAMPLE_IDS.payroll,
  status: 'completed',
  type: 'regular',
  pay_period_start: '2026-11-01',
  pay_period_end: '2026-11-14',
  pay_date: '2026-11-20',
  effective_entry_date: '2026-11-20',
  release_by: '2026-11-19',
  employee_count: 1,
  totals: TOTALS,
  progress: { total: 1, done: 1 },
  approve_by: null,
  content_hash: HASH,
  created_at: '2026-11-17T15:02:21.004Z',
  updated_at: '2026-11-17T15:02:28.752Z',
} satisfies z.input<typeof payrollSummary>;
const DISBURSEMENT = {
  entry_count: 2,
  entry_hash: '0023100025',
  total_credit: 2589.5,
  total_debit: 2589.5,
  batch_count: 1,
  block_count: 1,
  file_id_modifier: 'A',
  effective_entry_date: '2026-11-20',
  created_at: '2026-11-17T15:02:27.310Z',
  file_id: EXAMPLE_IDS.file,
};
const FULL = {
  ...SUMMARY,
  employee_ids: [EXAMPLE_IDS.employee],
  blockers: null,
  net_pay_by_employee: null,
  submitted_by: { api_key_id: EXAMPLE_IDS.apiKey },
  approved_by: null,
  status_history: [
    { status: 'pending', at: '2026-11-17T15:02:21.004Z', reason: null },
    { status: 'processing', at: '2026-11-17T15:02:21.530Z', reason: null },
    { status: 'completed', at: '2026-11-17T15:02:28.752Z', reason: null },
  ],
  findings: [],
  disbursement: DISBURSEMENT,
  returns: { count: 0, amount: 0 },
  funding: {
    status: 'scheduled',
    amount: 2589.5,
    trace_number: '021000020000002',
    effective_entry_date: '2026-11-20',
    redebits: [],
  },
  reversals: { count: 0, amount: 0 },
  failure_reason: null,
} satisfies z.input<typeof payroll>;

const IMMUTABLE = {
  tag: 'Payroll',
  description:
    'A submitted payroll cannot be changed: always `409 payroll_immutable` (404 for an unknown id). Correct a run with an `off_cycle` one.',
  params: payrollParams,
  success: [],
  errors: { 404: 'No run with this id in your organization', 409: '`payroll_immutable`: always, for an existing run' },
} satisfies Partial<RouteDef>;

export const payrollRoutes = routes('payroll', {
  submitPayroll: {
    method: 'POST',
    path: '/v1/payroll',
    scope: 'write:payroll',
    bucket: 'payroll_write',
    summary: 'Submit a payroll run (or validate it with dry_run=true)',
    access: ['bucket:read', 'bucket:write', 'queue:payroll:send', 'queue:webhooks:send'],
    tag: 'Payroll',
    description:
      'Submits a payroll run, processed asynchronously (usually within seconds: `GET /v1/payroll/{id}`). A rejected submission lists every problem in `details`; the status is the most basic among them: 400 if any input is malformed, else 422, else 409. With `dry_run=true` the body is validated exactly as a submission and the totals are answered with 200; nothing is stored and no window is taken.',
    query: submitPayrollQuery,
    headers: idempotencyHeaders,
    body: {
      schema: submitPayrollBody,
      validatedBy: 'use-case',
      example: {
        pay_period_start: '2026-11-01',
        pay_period_end: '2026-11-14',
        pay_date: '2026-11-20',
        employees: [
          {
            employee_id: EXAMPLE_IDS.employee,
            gross_pay: '3200.00',
            hours_worked: 80,
            bonuses: 150,
            deductions: { taxes: 640.5, benefits: 120 },
            notes: 'includes on-call',
          },
        ],
      },
    },
    success: [
      {
        status: 202,
        description: "Accepted for processing; `Location` is the run's URL",
        schema: submittedPayroll,
        envelope: 'SubmittedPayrollResponse',
        message: 'Payroll accepted for processing',
        example: SUBMITTED,
        location: true,
        headers: {
          'Idempotent-Replayed': {
            description:
              '`true` when this answer replays an earlier submission with the same `Idempotency-Key` and body',
            required: false,
          },
        },
      },
      {
        status: 200,
        description: '`dry_run=true`: the payroll is valid; nothing was stored',
        schema: dryRun,
        envelope: 'PayrollDryRunResponse',
        message: 'Dry run: the payroll is valid and nothing was stored',
        example: DRY_RUN,
      },
    ],
    errors: {
      400: '`invalid_request_body` (a field missing or malformed, an unknown field, an employee twice), `invalid_date_range` (a date blank, malformed or reversed) or `negative_pay`; also an `Idempotency-Key` outside 1–255 characters',
      409: '`duplicate_payroll_window`: a regular run for this pay period exists (`details[0].payroll_id` names it)',
      413: 'More than 25,000 employees, or a body over 6 MB',
      422: "`employee_not_found` (unknown, removed or another organization's), `missing_bank_account`, `idempotency_key_reused`; in production also `pay_date_too_soon` (the file would reach the bank after its `release_by` day: `details[].earliest_pay_date` gives the earliest pay date still possible) and `originator_not_configured` (an originator field still holds its placeholder: `details[].field` names it)",
    },
  },
  listPayrolls: {
    method: 'GET',
    path: '/v1/payroll',
    scope: 'read:payroll',
    bucket: 'read',
    summary: 'Payroll history',
    access: ['secret:signing'],
    tag: 'Payroll',
    description: 'Payroll history, newest first; `from`/`to` filter on the pay date.',
    query: listPayrollsQuery,
    success: [
      {
        status: 200,
        description: 'One page',
        schema: page('payrolls', payrollSummary),
        envelope: 'PayrollListResponse',
        example: { payrolls: [SUMMARY], next_page_token: null },
      },
    ],
    errors: {
      400: 'An invalid filter, `limit` or unknown parameter, or an altered or foreign `page_token` (`invalid_page_token`)',
    },
  },
  getPayroll: {
    method: 'GET',
    path: '/v1/payroll/{id}',
    scope: 'read:payroll',
    bucket: 'read',
    summary: 'Get a payroll run with its status, progress and history',
    access: ['bucket:read'],
    tag: 'Payroll',
    description:
      'A run with its status, progress, status history, totals, compliance findings, disbursement totals and failure reason.',
    params: payrollParams,
    success: [{ status: 200, description: 'The run', schema: payroll, envelope: 'PayrollResponse', example: FULL }],
    errors: { 404: 'No run with this id in your organization' },
  },
  getDisbursement: {
    method: 'GET',
    path: '/v1/payroll/{id}/disbursement',
    scope: 'read:payroll',
    bucket: 'read',
    summary: 'The NACHA file of a payroll run, or its control totals',
    access: ['bucket:read', 'kms:decrypt:disbursement-file'],
    tag: 'Payroll',
    description:
      "The run's NACHA PPD file (`text/plain`, 94-character records): one batch of credits to employees, balanced by one offset debit to the funding account when the organization has one (service class 200; else credits only, 220). With `Accept: application/json` its control totals. 404 until the file exists. Account numbers appear only inside this file, so the file needs the `read:disbursements` scope (admin keys) beside `read:payroll`; the control totals need `read:payroll` alone.",
    params: payrollParams,
    headers: z.object({
      Accept: acceptHeader.optional().meta({
        description: '`application/json` for the control totals; anything else for the file',
        example: 'application/json',
      }),
    }),
    success: [
      {
        status: 200,
        description: 'The NACHA file, or its control totals',
        schema: disbursement,
        envelope: 'DisbursementResponse',
        example: { payroll_id: EXAMPLE_IDS.payroll, ...DISBURSEMENT },
        alternatives: {
          'text/plain': {
            description:
              'The NACHA file (`Content-Disposition: attachment; filename="pay_….ach"`). It holds full account numbers: it needs the `read:disbursements` scope too (admin keys).',
            scope: { scope: 'read:disbursements', default: true },
            schema: NACHA_FILE,
            get example() {
              return exampleFile();
            },
          },
        },
        headers: {
          'Content-Disposition': {
            description: 'On the file: `attachment; filename="<payroll_id>.ach"`',
            required: false,
          },
        },
      },
    ],
    errors: {
      403: '`insufficient_scope`: the file (anything but `Accept: application/json`) needs `read:disbursements`',
      404: 'No run with this id, or its file is not written yet (the run is `pending` or `processing`)',
      409: '`payroll_rejected`: the run was rejected by its compliance checks and never has a file',
      410: '`disbursement_withdrawn`: the run was cancelled or failed; its file must not reach a bank',
    },
  },
  approvePayroll: {
    method: 'POST',
    path: '/v1/payroll/{id}/approve',
    scope: 'approve:payroll',
    bucket: 'payroll_write',
    summary: 'Approve a run awaiting approval: it moves to pending and is processed',
    access: ['bucket:read', 'queue:payroll:send', 'queue:webhooks:send'],
    tag: 'Payroll',
    description:
      "For organizations whose `payroll_approval` is `required`: a run is accepted in `awaiting_approval` and moves no money until approved here. Dual control: the key that submitted the run may not approve it (403 `approver_is_submitter`). The run's blockers are checked again (422 `payroll_blocked`, every blocker in `details`): an employee removed or whose account was invalidated or removed since, an originator still holding placeholders, and in production an approval after the run's `approve_by` (`approval_deadline_passed`, with the earliest pay date still possible). Of an approval and a cancel racing, exactly one wins. Emits `payroll.approved` naming the approving key.",
    params: payrollParams,
    success: [
      {
        status: 200,
        description: 'The approved run, now pending',
        schema: payrollSummary,
        envelope: 'PayrollSummaryResponse',
        message: 'Payroll approved',
        example: { ...SUMMARY, status: 'pending', progress: { total: 1, done: 0 } },
      },
    ],
    errors: {
      403: '`approver_is_submitter`: the approving key submitted the run (dual control)',
      404: 'No run with this id in your organization',
      409: '`payroll_not_awaiting_approval`: the run is not awaiting approval (approved already, cancelled, or accepted without approval)',
      422: '`payroll_blocked`: something stops the run; `details` lists every blocker',
    },
  },
  cancelPayroll: {
    method: 'POST',
    path: '/v1/payroll/{id}/cancel',
    scope: 'write:payroll',
    bucket: 'payroll_write',
    summary: 'Cancel a payroll run (awaiting approval: anywhere; past approval: sandbox only)',
    access: ['bucket:read', 'queue:webhooks:send'],
    tag: 'Payroll',
    description:
      'A run `awaiting_approval` moved no money: it may be cancelled in every environment (it ends `cancelled` and its window is freed). Past approval, sandbox only: cancels a `pending`, `processing` or `completed` run: the cancel wins over processing (the run never becomes `completed` afterwards), its window is freed, every paystub of it becomes `voided` (still readable, payments `cancelled`), and its file is withdrawn (410) and its bank data destroyed. Cancelling a run that is already cancelled answers 409 `payroll_not_cancellable`.',
    params: payrollParams,
    success: [
      {
        status: 200,
        description: 'The cancelled run',
        schema: payrollSummary,
        envelope: 'PayrollSummaryResponse',
        message: 'Payroll cancelled',
        example: { ...SUMMARY, status: 'cancelled' },
      },
    ],
    errors: {
      403: '`sandbox_only`: outside the sandbox, for a run past approval',
      404: 'No run with this id in your organization',
      409: '`payroll_not_cancellable`: the run was rejected, failed or already cancelled',
    },
  },
  replacePayroll: {
    method: 'PUT',
    path: '/v1/payroll/{id}',
    scope: 'write:payroll',
    bucket: 'payroll_write',
    summary: 'Refused: a submitted payroll is immutable',
    access: [],
    ...IMMUTABLE,
  },
  updatePayroll: {
    method: 'PATCH',
    path: '/v1/payroll/{id}',
    scope: 'write:payroll',
    bucket: 'payroll_write',
    summary: 'Refused: a submitted payroll is immutable',
    access: [],
    ...IMMUTABLE,
  },
  deletePayroll: {
    method: 'DELETE',
    path: '/v1/payroll/{id}',
    scope: 'write:payroll',
    bucket: 'payroll_write',
    summary: 'Refused: a submitted payroll is immutable',
    access: [],
    ...IMMUTABLE,
  },
});
