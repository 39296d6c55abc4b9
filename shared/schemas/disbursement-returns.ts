import * as z from 'zod';
import { type CorrectedAccount, isReturnCode, parseCorrectedData } from '../domain/returns.js';

const traceNumber = z
  .string()
  .regex(/^\d{15}$/, { message: 'A trace number is 15 digits' })
  .meta({
    maxLength: 15,
    description: 'The trace number of the entry the service sent (`payment.trace_number` of the paystub)',
  });

/**
 * At most this many items in one report: a bank's daily return file is far smaller (returns run at well under 1% of
 * entries), and this many are applied within the API's time limit.
 */
export const MAX_REPORT_ITEMS = 2_000;

const returnItem = z.strictObject({
  trace_number: traceNumber,
  code: z
    .string()
    .refine(isReturnCode, { message: 'Not a return reason code (R01…R85)' })
    // The form of every code the refinement accepts (R01…R85, those of RETURN_REASONS).
    .meta({ maxLength: 3, pattern: '^R\\d{2}$', description: 'The return reason code', example: 'R03' }),
});

const correctionItem = z
  .strictObject({
    trace_number: traceNumber,
    code: z
      .string()
      .regex(/^C(0[1-9]|1[34])$/, { message: 'Not a change code (C01…C09, C13, C14)' })
      .meta({ maxLength: 3, description: 'The change code', example: 'C01' }),
    corrected_data: z
      .string()
      .max(29)
      // A field of a NACHA record: printable ASCII, as the bank's file carries it.
      .regex(/^[ -~]*$/, { message: 'Only printable ASCII characters, as the NACHA record carries them' })
      .meta({
        description:
          'The corrected data field of the addenda record, as the bank sent it: C01 the account number; C02 the routing number; C03 the routing number, blanks, the account number; C05 the transaction code (22 checking, 32 savings); C06 the account number, blanks, the transaction code; C07 routing, account and transaction code',
        example: '123456780',
      }),
  })
  .transform((c, ctx): { trace_number: string; code: string; corrected: CorrectedAccount } => {
    const corrected = parseCorrectedData(c.code, c.corrected_data.padEnd(29, ' '));
    if (typeof corrected === 'string') {
      ctx.addIssue({ code: 'custom', message: corrected, path: ['corrected_data'], input: c.corrected_data });
      return z.NEVER;
    }
    return { trace_number: c.trace_number, code: c.code, corrected };
  });

/** The JSON form of what the bank reported: returns and notifications of change. */
export const bankReportBody = z
  .strictObject({
    returns: z.array(returnItem).max(MAX_REPORT_ITEMS).default([]),
    corrections: z.array(correctionItem).max(MAX_REPORT_ITEMS).default([]),
  })
  .refine((r) => r.returns.length + r.corrections.length > 0, {
    message: 'A report has at least one return or correction',
    path: ['returns'],
  });
