import * as z from 'zod';
import { writeReturnFile } from '../adapters/nacha-returns.js';
import { bankReportBody, MAX_REPORT_ITEMS } from '../schemas/disbursement-returns.js';
import type { ItemOutcome } from '../use-cases/disbursement-returns.js';
import { EXAMPLE_IDS, fits, id, traceNumber, type Fits } from './common.js';
import { routes } from './route.js';

const outcome = z
  .strictObject({
    // Checked when the report was read: 15 digits, and a return or change code.
    trace_number: traceNumber,
    type: z.enum(['return', 'correction']),
    code: z
      .string()
      .max(3)
      .regex(/^[RC]\d{2}$/),
    outcome: z.enum(['applied', 'unknown_trace', 'already_applied', 'amount_mismatch']).meta({
      description:
        "`applied`: this request changed the payment; `already_applied`: an earlier report did (nothing changed now); `unknown_trace`: no deposit of your organization carried this trace number; `amount_mismatch`: a returned entry's amount is not the deposit's (not applied)",
    }),
    paystub_id: id('stub', EXAMPLE_IDS.paystub)
      .optional()
      .meta({ description: 'The paystub whose deposit it is, when known' }),
    account_updated: z.boolean().optional().meta({
      description:
        "A correction: whether the employee's bank account was changed (only while it is still the account the deposit went to)",
    }),
    entry: z.enum(['funding_debit', 'reversal_debit', 'reversal_offset']).optional().meta({
      description:
        "A returned entry that was not an employee's deposit: `funding_debit` (a run's offset debit or a re-debit: the organization is put on a funding hold), `reversal_debit` (a reversal's debit: the payment becomes `reversal_returned`), `reversal_offset` (a reversal's credit to the funding account)",
    }),
    payroll_id: id('pay', EXAMPLE_IDS.payroll).optional().meta({ description: 'The run the entry belongs to' }),
  })
  .meta({ id: 'BankReportOutcome' });
fits<Fits<ItemOutcome, typeof outcome>>(true);

const outcomes = z
  .strictObject({
    // A file carries at most MAX_REPORT_ITEMS items; the JSON form as many returns and as many corrections.
    outcomes: z
      .array(outcome)
      .max(2 * MAX_REPORT_ITEMS)
      .meta({ description: 'One per item, in the order of the report' }),
  })
  .meta({ id: 'BankReportOutcomes' });

const TRACE = '021000020000001';
/** Built when the document is (a getter below), not at a cold start. */
const exampleFile = () =>
  writeReturnFile('021000021', '011000015', '1234567890', new Date('2026-11-24T14:05:00Z'), [
    {
      originalTrace: TRACE,
      code: 'R03',
      amountCents: 258_950,
      routingNumber: '011000015',
      accountLast4: '6789',
      accountType: 'checking',
      individualId: EXAMPLE_IDS.employee.slice(-15),
    },
  ]);

export const disbursementReturnRoutes = routes('returns', {
  postDisbursementReturns: {
    method: 'POST',
    path: '/v1/disbursement-returns',
    // What a bank reports changes employees' bank accounts: admin keys only, never a payroll submitter's.
    scope: 'admin',
    bucket: 'payroll_write',
    summary: 'Report what the bank sent back: returned deposits and notifications of change',
    access: ['bucket:read', 'kms:encrypt:bank-account', 'queue:webhooks:send'],
    tag: 'Payroll',
    description: `Post the return / notification-of-change file your bank (the ODFI) makes available after a file settles, as it is (\`Content-Type: text/plain\`), or the same items as JSON. Each item is matched to the deposit by the original entry's trace number.

- A **return** (addenda type 99, R code) marks the paystub's \`payment\` \`returned\` with the code and its reason, adds to the run's \`returns\`, and emits \`payment.returned\`. The paystub stays \`issued\` and year-to-date totals do not change: the wages were earned. R02, R03 and R04 (account closed, missing or invalid) set the employee's \`bank_account.status\` to \`invalid\`: the next payroll answers 422 \`missing_bank_account\` for them until a new \`bank_account\` is set.
- A **notification of change** (SEC code COR, addenda type 98: C01, C02, C03, C05, C06, C07) corrects the employee's bank account if it is still the account the deposit went to, and emits \`employee.bank_account_corrected\` (masked). Other change codes are recorded, not applied.

Admin keys only: what a bank reports changes employees' bank accounts. A correction or an account-invalidating return applies only to the account the deposit went to: an account replaced since, or corrected since (a correction makes a new version of the account), is left alone.

The whole report is checked before any of it is applied: every record must be 94 characters (trailing blanks may be trimmed in transit, never a field the layout requires), every required header and control field present and in its format, each batch control must agree with its header (company identification, batch number, service class) and with its entries (count, hash, totals), and the file control with the whole file (batch, block and entry counts, hash, totals). A malformed file is 400 naming each bad line, and nothing changes. A returned entry whose amount is not the original deposit's answers \`amount_mismatch\` and is not applied. Applying is idempotent: sending the same report again (or twice at once) applies each item once; the repeats answer \`already_applied\`. At most ${MAX_REPORT_ITEMS.toLocaleString('en-US')} items per file or per list. If a request fails or times out half-way, post the same report again: what was applied answers \`already_applied\`, the rest is applied.`,
    body: {
      schema: bankReportBody,
      validatedBy: 'use-case',
      description: 'The JSON form: the returns and the corrections the bank reported',
      example: {
        returns: [{ trace_number: TRACE, code: 'R03' }],
        corrections: [{ trace_number: '021000020000002', code: 'C01', corrected_data: '987654321' }],
      },
      text: {
        description:
          "The bank's NACHA return / notification-of-change file as it is: 94-character records, return entries with addenda type 99, COR batches with addenda type 98",
        get example() {
          return exampleFile();
        },
      },
    },
    success: [
      {
        status: 200,
        description: 'One outcome per item, in order',
        schema: outcomes,
        envelope: 'BankReportResponse',
        message: 'Report applied',
        example: {
          outcomes: [
            { trace_number: TRACE, type: 'return', code: 'R03', outcome: 'applied', paystub_id: EXAMPLE_IDS.paystub },
          ],
        },
      },
    ],
    errors: {
      400: 'A malformed file (`invalid_record`, one problem per bad line, `field` names the line) or JSON body: nothing was applied',
    },
  },
});
