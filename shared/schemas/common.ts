import * as z from 'zod';
import { isValidRoutingNumber } from '../domain/aba.js';
import { isCalendarDate } from '../domain/dates.js';
import { type MoneyParse, parseMoney } from '../domain/money.js';

export const calendarDate = z
  .string()
  .refine(isCalendarDate, {
    message: 'Must be a real calendar date in YYYY-MM-DD form',
    params: { code: 'invalid_date' },
  })
  // The refinement checks the YYYY-MM-DD form, so the length and pattern are exactly what is enforced.
  .meta({ format: 'date', maxLength: 10, pattern: '^\\d{4}-\\d{2}-\\d{2}$', example: '2026-11-01' });

/**
 * Text that reaches PDFs, NACHA files, logs and dashboards must print as what it says. Refused: control characters
 * (Cc: NUL, ESC, CR, LF, tab, DEL, C1), format characters (Cf: the bidirectional overrides and isolates U+202A–U+202E
 * and U+2066–U+2069, direction marks, a byte-order mark, invisible tags), line and paragraph separators and lone
 * surrogates. Zero-width joiners and non-joiners (U+200C, U+200D) stay: some scripts and emoji need them.
 */
const UNPRINTABLE = /(?![\u200C\u200D])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

/** `text()`'s rule as a JSON Schema pattern: what the document declares for printable text, asked and answered. */
export const TEXT_PATTERN = '^(?:(?![\\u200C\\u200D])[^\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\p{Cs}]|[\\u200C\\u200D])*$';

/** A string of printable text, at most `max` characters. */
export function text(max: number) {
  return z
    .string()
    .max(max)
    .refine((value) => !UNPRINTABLE.test(value), {
      message: 'Must not contain control characters, bidirectional overrides or other invisible formatting',
      params: { code: 'invalid_characters' },
    })
    .meta({ pattern: TEXT_PATTERN });
}

/**
 * Printable text of 1 to `max` characters once trimmed. The length is checked after trimming, before `text()` looks
 * at the characters, so a name too long is one problem, as it always was; the document declares both.
 */
export const trimmedText = (max: number) =>
  z.string().trim().min(1).max(max).pipe(text(max)).meta({ pattern: TEXT_PATTERN });

export const personName = trimmedText(100);

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
  })
  // The pattern's length, declared.
  .meta({ maxLength: 9 });

export const accountNumber = z
  .string()
  .regex(/^\d{4,17}$/, { message: 'Must be 4 to 17 digits' })
  .meta({ maxLength: 17 });

/**
 * An id to look up, as a client holds one: 1 to 64 visible ASCII characters. One that names nothing of the
 * organization is 404 (an empty page for a filter); the ids the service issues are `<prefix>_` and 26 Crockford
 * base32 characters (shared/adapters/ids.ts).
 */
export const lookupId = z
  .string()
  .min(1)
  .max(64)
  // `*`, not `+`: an empty id is one problem (`required`), not two.
  .regex(/^[!-~]*$/, { message: 'An id is visible ASCII characters: letters, digits and punctuation' })
  .meta({ pattern: '^[!-~]+$' });

export const accountType = z.enum(['checking', 'savings']);

/** The longest money text read: 13 digits, a point and two decimals fit four times over. */
export const MAX_MONEY_TEXT = 64;

/** `parseMoney`'s rule for a money string, as a JSON Schema pattern: digits alone, no blanks around them. */
const MONEY_TEXT_PATTERN = '^(?:0|[1-9]\\d{0,12})(?:\\.\\d{1,2})?$';

/** The largest money number read: 13 digits before the point (`MAX_PARSED_INTEGER_DIGITS`). */
const MAX_MONEY_NUMBER = 9_999_999_999_999.99;

/** A money value as the request carries it: a number or a numeric string of at most `MAX_MONEY_TEXT` characters. */
export function parseMoneyInput(value: unknown): MoneyParse {
  if (typeof value === 'string' && value.length > MAX_MONEY_TEXT) return { ok: false, reason: 'format' };
  return parseMoney(value);
}

/** The two forms of a money value, up to `maxNumber` for a number. */
export const moneyForms = (maxNumber = MAX_MONEY_NUMBER) => [
  { type: 'number', minimum: 0, maximum: maxNumber },
  { type: 'string', maxLength: MAX_MONEY_TEXT, pattern: MONEY_TEXT_PATTERN },
];

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
    const parsed = parseMoneyInput(value);
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
    anyOf: moneyForms(),
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
  .meta({ type: 'integer', format: 'int32', minimum: 1, maximum: 100, default: 50, description: 'Page size' });

/** What the service signs a page token as (shared/adapters/page-token.ts): base64url payload, `.`, base64url HMAC. */
export const PAGE_TOKEN_PATTERN = '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$';

/**
 * The pattern is declared, and enforced by the token's own check (shared/http/pagination.ts), not here: a token of
 * any other shape is a tampered one, answered `400 invalid_page_token` as CONTRACT §3 says, not as a malformed
 * parameter.
 */
export const pageTokenParam = z
  .string()
  .min(1)
  .max(4096)
  .optional()
  .meta({ description: 'The `next_page_token` of the previous page', pattern: PAGE_TOKEN_PATTERN });
