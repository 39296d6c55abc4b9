import * as z from 'zod';
import type { IdPrefix } from '../adapters/ids.js';
import { RETURN_REASONS } from '../domain/returns.js';
import { PAGE_TOKEN_PATTERN, TEXT_PATTERN } from '../schemas/common.js';

/**
 * The pieces the route declarations build their answers' schemas from. Response schemas document the API and
 * check it in the contract tests; the handlers build their answers with the `*View` functions, and each resource
 * file checks at compile time that its view's type fits its schema.
 */

/**
 * Compile-time check that a view fits its response schema: its type is assignable to the schema's output and it
 * has no top-level field the schema lacks. `fits<Fits<View, typeof schema>>(true)` fails to compile otherwise.
 */
export type Fits<View, Schema extends z.ZodType> = [View] extends [z.output<Schema>]
  ? [Exclude<keyof View, keyof z.output<Schema>>] extends [never]
    ? true
    : never
  : never;
export const fits = <T extends true>(ok: T): T => ok;

/**
 * The bounds of what the service answers, declared once. Each is true of every value the service emits (the code
 * that builds it is named); request fields are bounded by their zod schemas (shared/schemas).
 */

/**
 * An id the service issued (shared/adapters/ids.ts): the type prefix and 26 lowercase Crockford base32 characters,
 * a ULID (`newId`) or, for a paystub, a digest of its run and employee (`deterministicId`).
 */
export const id = (prefix: IdPrefix, example: string) =>
  z
    .string()
    .max(prefix.length + 27)
    .regex(new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`))
    .meta({ description: `\`${prefix}_\` and 26 lowercase Crockford base32 characters`, example });

/** `Date.prototype.toISOString`, which writes every instant the service stores: 24 characters, 27 past year 9999. */
export const timestamp = z
  .string()
  .max(27)
  .meta({ format: 'date-time', description: 'UTC, ISO 8601 with milliseconds', example: '2026-11-21T10:02:28.752Z' });
export const date = z
  .string()
  .max(10)
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .meta({ format: 'date', example: '2026-11-20' });
export const amount = z
  .number()
  .min(0)
  .meta({ description: 'Money as a JSON number with at most two decimals', example: 3200 });

/**
 * Text of at most `max` characters that prints as what it says: what the request schemas let in (`text()`), or what
 * the service writes itself (messages, reasons).
 */
export const printable = (max: number) => z.string().max(max).meta({ pattern: TEXT_PATTERN });

/** A snake_case code (`invalid_check_digit`, `employee_not_found` …). */
export const code = z
  .string()
  .max(64)
  .regex(/^[a-z][a-z0-9_]*$/);

/** API Gateway's request id (a UUID), or the local stack's (a UUID too). */
export const requestId = z
  .string()
  .max(64)
  .regex(/^[0-9A-Za-z-]+$/)
  .meta({ example: 'bdb6885f-a0f8-48ff-8d00-7a77a3b6d1a1' });

/**
 * A request header's value as the routes that read one take it (`Accept`): no control character but tab (what
 * HTTP lets a header carry) and at most 1024 characters; anything else is 400.
 */
export const acceptHeader = z
  .string()
  .max(1024)
  .regex(/^(?:\t|\P{Cc})*$/u, { message: 'A header value has no control characters' })
  // The same pattern, without the flag the generator would write into it.
  .meta({ pattern: '^(?:\\t|\\P{Cc})*$' });

/** A 32-bit integer from `min` to `max` (the document says so: `format: int32`). */
export const int32 = (min: number, max = 2_147_483_647) => z.int().min(min).max(max).meta({ format: 'int32' });

export const routingNumber = z
  .string()
  .max(9)
  .regex(/^\d{9}$/);
export const accountLast4 = z
  .string()
  .max(4)
  .regex(/^\d{4}$/);
/** A return reason code the service applies (shared/domain/returns.ts), and its standard reason. */
export const returnCode = z
  .enum(Object.keys(RETURN_REASONS) as [string, ...string[]])
  .meta({ id: 'ReturnCode', description: 'A return reason code (NACHA Operating Rules, Appendix Four)' });
export const returnReason = z
  .enum(Object.values(RETURN_REASONS) as [string, ...string[]])
  .meta({ id: 'ReturnReason', description: "The return code's standard reason" });

export const traceNumber = z
  .string()
  .max(15)
  .regex(/^\d{15}$/);

/** The sandbox originator every example of the document shows (settings, and the example run's file). */
export const EXAMPLE_ORIGINATOR = {
  company_name: 'ACME',
  company_identification: '1000000001',
  originating_dfi_identification: '02100002',
  immediate_destination: '021000021',
  immediate_destination_name: 'SANDBOX BANK',
  immediate_origin: '1000000001',
  immediate_origin_name: 'PAYROLL API',
};

export const EXAMPLE_IDS = {
  employee: 'emp_01kfz8d4w6t2m9q3r5v7x8y0ab',
  payroll: 'pay_01kfz8e2h5n8p0s2v4w6y8z1cd',
  paystub: 'stub_01kfz8f7k3m5n7q9s1t3v5x7ef',
  webhook: 'whk_01kfz8g1a3c5e7g9j1k3n5q7gh',
  event: 'evt_01kfz8h9b1d3f5h7k9m1p3r5jk',
  apiKey: 'key_01kfz8j5c7e9g1j3k5n7q9s1mn',
  file: 'file_01kfz8k2d4f6h8k0m2p4r6t8vw',
  request: 'bdb6885f-a0f8-48ff-8d00-7a77a3b6d1a1',
} as const;

/** The most items a page holds: `limit` is at most 100. */
export const MAX_PAGE_ITEMS = 100;

/**
 * A list view: the items under `key`, and the signed token of the next page (`null` on the last page). The token
 * (shared/adapters/page-token.ts) signs the organization, the filters and the last key: at most `tokenLength`
 * characters, which is what `page_token` accepts unless a list's filters can be longer.
 */
export function page<K extends string, T extends z.ZodType>(key: K, item: T, tokenLength = 4096) {
  return z.strictObject({
    [key]: z.array(item).max(MAX_PAGE_ITEMS),
    next_page_token: z
      .string()
      .max(tokenLength)
      .regex(new RegExp(PAGE_TOKEN_PATTERN))
      .nullable()
      .meta({ description: 'Opaque and signed; pass it as `page_token` for the next page. `null` on the last page.' }),
  } as { [P in K]: z.ZodArray<T> } & { next_page_token: z.ZodNullable<z.ZodString> });
}

export const totals = z
  .strictObject({ gross_pay: amount, bonuses: amount, deductions: amount, net_pay: amount })
  .meta({ id: 'PayrollTotals', example: { gross_pay: 3200, bonuses: 150, deductions: 760.5, net_pay: 2589.5 } });
