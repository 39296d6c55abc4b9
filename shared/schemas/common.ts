import * as z from 'zod';
import { isValidRoutingNumber } from '../domain/aba.js';
import { isCalendarDate } from '../domain/dates.js';
import { parseMoney } from '../domain/money.js';

export const calendarDate = z
  .string()
  .refine(isCalendarDate, {
    message: 'Must be a real calendar date in YYYY-MM-DD form',
    params: { code: 'invalid_date' },
  })
  .meta({ format: 'date', example: '2026-11-01' });

/**
 * Text that reaches PDFs, NACHA files, logs and dashboards must print as what it says. Refused: control characters
 * (Cc: NUL, ESC, CR, LF, tab, DEL, C1), format characters (Cf: the bidirectional overrides and isolates U+202A–U+202E
 * and U+2066–U+2069, direction marks, a byte-order mark, invisible tags), line and paragraph separators and lone
 * surrogates. Zero-width joiners and non-joiners (U+200C, U+200D) stay: some scripts and emoji need them.
 */
const UNPRINTABLE = /(?![\u200C\u200D])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

/** A string of printable text, at most `max` characters. */
export function text(max: number) {
  return z
    .string()
    .max(max)
    .refine((value) => !UNPRINTABLE.test(value), {
      message: 'Must not contain control characters, bidirectional overrides or other invisible formatting',
      params: { code: 'invalid_characters' },
    })
    .meta({ pattern: '^(?:(?![\\u200C\\u200D])[^\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\p{Cs}]|[\\u200C\\u200D])*$' });
}

export const personName = z.string().trim().min(1).pipe(text(100));

export const email = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email({ message: 'Must be an email address' }))
  .meta({ format: 'email', example: 'ada@example.com' });

export const routingNumber = z
  .string()
  .regex(/^\d{9}$/, { message: 'Must be 9 digits' })
  .refine(isValidRoutingNumber, {
    message: 'Not a valid ABA routing number (check digit)',
    params: { code: 'invalid_check_digit' },
  });

export const accountNumber = z.string().regex(/^\d{4,17}$/, { message: 'Must be 4 to 17 digits' });

export const accountType = z.enum(['checking', 'savings']);

/**
 * Non-negative money with at most two decimals, from a JSON number or a numeric string; yields cents. Parsed from
 * `unknown` so a missing, null, non-finite or wrongly typed value gets its own precise reason.
 */
export const money = z
  .unknown()
  .transform((value, ctx): number => {
    if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
      ctx.addIssue({ code: 'custom', message: 'This field is required', params: { code: 'required' } });
      return z.NEVER;
    }
    const parsed = parseMoney(value);
    if (parsed.ok) return parsed.cents;
    const byReason = {
      negative: { code: 'negative_pay', message: 'Must not be negative' },
      precision: { code: 'invalid_precision', message: 'At most two decimal places' },
      format: { code: 'invalid_amount', message: 'Must be a decimal amount such as 1234.56' },
      out_of_range: { code: 'out_of_range', message: 'Too large: no amount has more than 13 digits before the point' },
    } as const;
    const problem = byReason[parsed.reason];
    ctx.addIssue({ code: 'custom', message: problem.message, params: { code: problem.code } });
    return z.NEVER;
  })
  .meta({
    anyOf: [
      { type: 'number', minimum: 0 },
      { type: 'string', pattern: '^\\d+(\\.\\d{1,2})?$' },
    ],
    description: 'Money: a JSON number or a numeric string, at most two decimals, never negative',
    example: '3200.00',
  });

export const limitParam = z
  .string()
  .regex(/^\d+$/, { message: 'Must be a whole number from 1 to 100' })
  .transform(Number)
  .pipe(z.number().int().min(1).max(100))
  .optional()
  .default(50)
  // Documented as what it is on the wire, a whole number (the OpenAPI document reads this metadata).
  .meta({ type: 'integer', minimum: 1, maximum: 100, default: 50, description: 'Page size' });

export const pageTokenParam = z
  .string()
  .min(1)
  .max(4096)
  .optional()
  .meta({ description: 'The `next_page_token` of the previous page' });
