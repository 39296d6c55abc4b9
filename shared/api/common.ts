import * as z from 'zod';

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

export const id = (prefix: string, example: string) =>
  z
    .string()
    .regex(new RegExp(`^${prefix}_[0-9a-z]{26}$`))
    .meta({ description: `\`${prefix}_\` and a lowercase ULID`, example });

export const timestamp = z
  .string()
  .meta({ format: 'date-time', description: 'UTC, ISO 8601 with milliseconds', example: '2026-11-21T10:02:28.752Z' });
export const date = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .meta({ format: 'date', example: '2026-11-20' });
export const amount = z
  .number()
  .min(0)
  .meta({ description: 'Money as a JSON number with at most two decimals', example: 3200 });

export const EXAMPLE_IDS = {
  employee: 'emp_01kfz8d4w6t2m9q3r5v7x8y0ab',
  payroll: 'pay_01kfz8e2h5n8p0s2u4w6y8z1cd',
  paystub: 'stub_01kfz8f7k3m5n7q9s1t3v5x7ef',
  webhook: 'whk_01kfz8g1a3c5e7g9j1l3n5q7gh',
  event: 'evt_01kfz8h9b1d3f5h7k9m1p3r5jk',
  apiKey: 'key_01kfz8j5c7e9g1j3l5n7q9s1mn',
  request: 'bdb6885f-a0f8-48ff-8d00-7a77a3b6d1a1',
} as const;

/** A list view: the items under `key`, and the signed token of the next page (`null` on the last page). */
export function page<K extends string, T extends z.ZodType>(key: K, item: T) {
  return z.strictObject({
    [key]: z.array(item),
    next_page_token: z
      .string()
      .nullable()
      .meta({ description: 'Opaque and signed; pass it as `page_token` for the next page. `null` on the last page.' }),
  } as { [P in K]: z.ZodArray<T> } & { next_page_token: z.ZodNullable<z.ZodString> });
}

export const totals = z
  .strictObject({ gross_pay: amount, bonuses: amount, deductions: amount, net_pay: amount })
  .meta({ id: 'PayrollTotals', example: { gross_pay: 3200, bonuses: 150, deductions: 760.5, net_pay: 2589.5 } });
