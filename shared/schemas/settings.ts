import { TIME_OF_DAY } from '../domain/banking-calendar.js';
import * as z from 'zod';
import { isValidRoutingNumber, withCheckDigit } from '../domain/aba.js';
import { ACH_CHARACTERS } from '../domain/ach-text.js';
import { MAX_ENTRY_CENTS, MAX_TOTAL_CENTS } from '../domain/disbursement.js';
import { formatCents } from '../domain/money.js';
import { APPROVAL_MODES, DEFAULT_FILE_RETENTION_DAYS, MAX_FILE_RETENTION_DAYS } from '../domain/settings.js';
import { money, moneyForms, routingNumber, text } from './common.js';
import { bankAccountInput } from './employee.js';

const valueList = z
  .array(text(100).min(1))
  .min(1)
  .max(50)
  .refine((list) => new Set(list).size === list.length, {
    message: 'Values must be unique',
    params: { code: 'duplicate_value' },
  });

/** All zeros is what a production organization starts with: a placeholder, never an identifier a bank knows. */
const notZeros = <T extends z.ZodType<string>>(schema: T) =>
  schema.refine((v) => !/^[ 0]+$/.test(v), {
    message: 'All zeros is a placeholder, not an identifier',
    params: { code: 'invalid_value' },
  });

/** The longest ACH name read, blanks around it included; at most 16 or 23 characters are kept once trimmed. */
const MAX_ACH_NAME_INPUT = 64;

/**
 * ACH text, as the file carries it: letters (stored uppercase, as the file writes them), digits, spaces and
 * `& ' - . , /`; no character the file would have to drop or change.
 */
const achName = (max: number) =>
  z
    .string()
    // Blanks around the name are trimmed, so what is sent may be longer than what is stored, but not without end.
    .max(MAX_ACH_NAME_INPUT, { message: `At most ${max} characters (${MAX_ACH_NAME_INPUT} with surrounding blanks)` })
    .regex(new RegExp(`^[a-z${ACH_CHARACTERS}]*$`), { message: "Only letters A–Z, digits, spaces and & ' - . , /" })
    .transform((v) => v.trim().toUpperCase())
    .pipe(
      z
        .string()
        .min(1, { message: 'Must not be blank' })
        .max(max, { message: `At most ${max} characters` }),
    );

/** 10 characters of digits and uppercase letters, as the file header and batch records carry them. */
const tenCharacters = (leadingSpace: boolean) =>
  notZeros(
    z.string().regex(leadingSpace ? /^(?: [0-9A-Z]{9}|[0-9A-Z]{10})$/ : /^[0-9A-Z]{10}$/, {
      message: leadingSpace
        ? 'Must be 10 characters, digits and uppercase letters (or a space and 9)'
        : 'Must be 10 characters, digits and uppercase letters',
    }),
  ).meta({ maxLength: 10 });

export const originatorInput = z.strictObject({
  company_name: achName(16),
  company_identification: tenCharacters(false),
  originating_dfi_identification: notZeros(z.string().regex(/^\d{8}$/, { message: 'Must be 8 digits' }))
    .meta({ maxLength: 8 })
    .refine((v) => !/^\d{8}$/.test(v) || v === '00000000' || isValidRoutingNumber(withCheckDigit(v)), {
      message: 'Not the first 8 digits of a routing number (unknown Federal Reserve routing symbol)',
      params: { code: 'invalid_value' },
    }),
  immediate_destination: routingNumber,
  immediate_destination_name: achName(23),
  immediate_origin: tenCharacters(true),
  immediate_origin_name: achName(23),
});

/** A cap no payment or file could ever reach is refused: nothing impossible to pay is ever configured. */
function bounded(max: number, what: string) {
  return money
    .refine((cents) => cents <= max, {
      message: `Must be at most ${formatCents(max)}, ${what}`,
      params: { code: 'out_of_range' },
    })
    .meta({ anyOf: moneyForms(max / 100), description: `Money, at most ${formatCents(max)} (${what})` });
}

export const updateSettingsBody = z.strictObject({
  employment_types: valueList.optional(),
  pay_groups: valueList.optional(),
  pay_schedules: valueList.optional(),
  max_net_pay_per_employee: bounded(MAX_ENTRY_CENTS, 'the most one direct deposit carries').optional(),
  max_payroll_total: bounded(MAX_TOTAL_CENTS, 'the most one disbursement file carries').optional(),
  originator: originatorInput.partial().optional(),
  funding_account: bankAccountInput.nullable().optional(),
  payroll_approval: z
    .enum(APPROVAL_MODES)
    .meta({ description: '`required`: runs wait for another key or person to approve them' })
    .optional(),
  approval_cutoff_time: z
    .string()
    .max(5)
    .regex(TIME_OF_DAY, { message: 'A time of day, HH:MM (24-hour, New York time)' })
    .meta({ description: 'HH:MM, New York time: runs must be approved by their release day at this time' })
    .optional(),
  file_retention_days: z
    .number()
    .int()
    .min(DEFAULT_FILE_RETENTION_DAYS, {
      message: `At least ${DEFAULT_FILE_RETENTION_DAYS} days: NACHA's two-year record retention`,
    })
    .max(MAX_FILE_RETENTION_DAYS, { message: `At most ${MAX_FILE_RETENTION_DAYS} days` })
    .meta({ format: 'int32', description: 'Days each NACHA file is kept under a retention lock (730 to 3650)' })
    .optional(),
});
export type UpdateSettingsInput = z.infer<typeof updateSettingsBody>;
