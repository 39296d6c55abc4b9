import * as z from 'zod';
import { FILE_TYPES, MAX_REVERSAL_PAYMENTS, REVERSAL_REASONS } from '../domain/money-back.js';
import { calendarDate, limitParam, lookupId, pageTokenParam } from './common.js';

export const listFilesQuery = z
  .strictObject({
    type: z.enum(FILE_TYPES).optional().meta({ description: 'Only files of this type' }),
    payroll_id: lookupId.optional().meta({ description: "Only this run's files" }),
    from: calendarDate.optional().meta({ description: 'Files created on or after this date (UTC)' }),
    to: calendarDate.optional().meta({ description: 'Files created on or before this date (UTC)' }),
    limit: limitParam,
    page_token: pageTokenParam,
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, {
    message: '`from` must not be after `to`',
    path: ['to'],
    params: { code: 'invalid_date_range' },
  });

export const fileIdParams = z.object({ id: lookupId });

export const reversalBody = z
  .strictObject({
    reason: z.enum(REVERSAL_REASONS).meta({
      description:
        '`duplicate` (paid twice), `incorrect_amount` (paid the wrong amount), `incorrect_account` (paid to the wrong account)',
    }),
    paystub_ids: z
      .array(lookupId)
      .min(1)
      .max(MAX_REVERSAL_PAYMENTS)
      .refine((ids) => new Set(ids).size === ids.length, { message: 'A paystub may be named once' })
      .meta({ description: `The paystubs whose payments to reverse: 1 to ${MAX_REVERSAL_PAYMENTS}, each once` }),
  })
  .meta({ id: 'ReversalRequest' });

export const resolveFundingBody = z
  .strictObject({
    method: z.enum(['wire', 'other']).meta({ description: 'How the organization paid the returned debit' }),
    reference: z
      .string()
      .min(1)
      .max(140)
      .regex(/^[ -~]+$/, { message: 'Printable ASCII' })
      .meta({ description: "The wire's reference (Fedwire IMAD, the bank's confirmation), for the record" }),
  })
  .meta({ id: 'FundingResolution' });
