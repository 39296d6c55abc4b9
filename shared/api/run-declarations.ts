import * as z from 'zod';
import { buildNachaFile, entryDetailRecord } from '../adapters/nacha.js';
import { MAX_TOTAL_CENTS, offsetEntryCount } from '../domain/disbursement.js';
import { FUNDING_STATUSES, MAX_REDEBITS } from '../domain/money-back.js';
import { MAX_EMPLOYEES_PER_PAYROLL } from '../domain/payroll.js';
import { payrollIdParams } from '../schemas/payroll.js';
import {
  EXAMPLE_IDS,
  EXAMPLE_ORIGINATOR,
  amount,
  date,
  id,
  printable,
  returnCode,
  returnReason,
  timestamp,
  traceNumber,
} from './common.js';

/*
 * What the payroll routes and the disbursement routes (files, money back) both declare: a run's file, its funding
 * debit, the run id parameter and the idempotency header. Apart from either, so that neither function loads the
 * other's declarations.
 */

export const effectiveEntryDate = date.meta({
  description:
    'The day the deposits settle: the pay date if it is a banking day, else the last banking day before it (employees are never paid late)',
});

/**
 * The file of a run (shared/adapters/nacha.ts): one batch of at most MAX_EMPLOYEES_PER_PAYROLL credits and the
 * offset debits that balance them (more than one only past one entry's amount), between the file and batch header
 * and control records, padded to blocks of 10 records.
 */
export const MAX_FILE_ENTRIES = MAX_EMPLOYEES_PER_PAYROLL + offsetEntryCount(MAX_TOTAL_CENTS);
export const MAX_FILE_BLOCKS = Math.ceil((MAX_FILE_ENTRIES + 4) / 10);

/**
 * The file itself: 94-character records of printable ASCII separated by LF, none after the last, as many as the
 * blocks hold.
 */
export const NACHA_FILE = {
  type: 'string' as const,
  maxLength: MAX_FILE_BLOCKS * 10 * 95 - 1,
  pattern: '^[ -~]{94}(\\n[ -~]{94})*$',
};

const bankReturn = z
  .strictObject({ code: returnCode, reason: returnReason, returned_at: timestamp })
  .meta({ description: 'What the bank returned, and when it was reported' });

export const funding = z
  .strictObject({
    status: z.enum(FUNDING_STATUSES).meta({
      description:
        "`scheduled`: the offset debit is in the run's file; `returned`: the bank returned it (the organization is on a funding hold); `redebit_scheduled`: re-debited, the hold lifted (a return of the re-debit puts it back); `resolved`: paid by other means",
    }),
    amount: amount.meta({ description: "The debit of the funding account: the run's credits" }),
    trace_number: traceNumber.meta({ description: "The offset debit's trace number" }),
    effective_entry_date: effectiveEntryDate,
    return: bankReturn.optional().meta({ description: 'The latest return of the debit (or of a re-debit)' }),
    redebits: z
      .array(
        z.strictObject({
          file_id: id('file', EXAMPLE_IDS.file),
          trace_number: traceNumber,
          amount,
          effective_entry_date: date,
          created_at: timestamp,
          return: bankReturn.optional(),
        }),
      )
      .max(MAX_REDEBITS)
      .meta({ description: 'Re-initiations of the debit (`RETRY PYMT`), at most two' }),
    resolution: z
      .strictObject({ method: z.enum(['wire', 'other']), reference: printable(140), resolved_at: timestamp })
      .optional()
      .meta({ description: 'How the organization paid the returned debit otherwise' }),
  })
  .meta({ id: 'Funding', description: "A balanced run's debit of the funding account, and what became of it" });

/**
 * The file of the example run: one credit of 2,589.50 and the offset debit that balances it. Built when the
 * document is (a getter below), not when a function loads these declarations: the banking calendar's time-zone
 * data alone costs a cold start about 17 ms.
 */
export const exampleFile = () =>
  buildNachaFile({
    originator: EXAMPLE_ORIGINATOR,
    fileCreation: new Date('2026-11-17T15:02:27.310Z'),
    effectiveEntryDate: '2026-11-20',
    companyEntryDescription: 'PAYROLL',
    entries: [
      entryDetailRecord('02100002', {
        routingNumber: '021000021',
        accountNumber: '123456789',
        accountType: 'checking',
        amountCents: 258_950,
        individualId: EXAMPLE_IDS.employee.slice(-15),
        individualName: 'Ada Lovelace',
        traceSequence: 1,
      }),
    ],
    offset: { routingNumber: '021000021', accountNumber: '000123456789', accountType: 'checking', traceSequence: 2 },
  }).content;

export const payrollParams = payrollIdParams.extend({
  id: payrollIdParams.shape.id.meta({ description: 'A payroll run id', example: EXAMPLE_IDS.payroll }),
});
export const idempotencyHeaders = z.object({
  // One check, so a key of the wrong length (or an empty one) is one problem, `invalid_format`.
  'Idempotency-Key': z
    .string()
    .regex(/^[\s\S]{1,255}$/, { message: 'An idempotency key is 1 to 255 characters' })
    .optional()
    .meta({
      maxLength: 255,
      description:
        'The same key with the same body (compared by `content_hash`) replays the first 202 for 24 hours with `Idempotent-Replayed: true`; with another body it is 422 `idempotency_key_reused`.',
      example: 'run-2026-11-01',
    }),
});
