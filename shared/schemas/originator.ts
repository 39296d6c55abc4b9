import * as z from 'zod';
import { isValidRoutingNumber, withCheckDigit } from '../domain/aba.js';
import { ACH_CHARACTERS } from '../domain/ach-text.js';
import { routingNumber } from './common.js';

/*
 * The NACHA originator as settings take it: its own module, as submissions check a stored originator against it
 * without loading the rest of the settings' schemas.
 */

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
