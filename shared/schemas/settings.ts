import { TIME_OF_DAY } from '../domain/banking-calendar.js';
import * as z from 'zod';
import { MAX_ENTRY_CENTS, MAX_TOTAL_CENTS } from '../domain/disbursement.js';
import { formatCents } from '../domain/money.js';
import {
  ARMORED_PUBLIC_KEY,
  HOST_KEY_FINGERPRINT,
  isRemoteDirectory,
  MAX_PGP_PUBLIC_KEY_CHARS,
  REMOTE_HOST,
} from '../domain/bank-link.js';
import { APPROVAL_MODES, DEFAULT_FILE_RETENTION_DAYS, MAX_FILE_RETENTION_DAYS } from '../domain/settings.js';
import { money, moneyForms, text } from './common.js';
import { bankAccountInput } from './employee.js';
import { originatorInput } from './originator.js';

const valueList = z
  .array(text(100).min(1))
  .min(1)
  .max(50)
  .refine((list) => new Set(list).size === list.length, {
    message: 'Values must be unique',
    params: { code: 'duplicate_value' },
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

const remoteDirectory = z
  .string()
  .max(201)
  .refine(isRemoteDirectory, { message: 'An absolute directory: `/`, then letters, digits, `.`, `_`, `-` and `/`' })
  .meta({ pattern: '^/[A-Za-z0-9._/-]*$' });

/**
 * The bank's OpenPGP public key, as armored text. Only its shape is checked here (schemas are synchronous); the key
 * itself is read where the settings are written (shared/use-cases/settings.ts).
 */
const pgpPublicKey = z
  .string()
  .max(MAX_PGP_PUBLIC_KEY_CHARS)
  .regex(ARMORED_PUBLIC_KEY, {
    message:
      'An armored OpenPGP public key: `-----BEGIN PGP PUBLIC KEY BLOCK-----` … `-----END PGP PUBLIC KEY BLOCK-----`',
  })
  .meta({
    description:
      "The bank's OpenPGP public key (armored): every file is then encrypted to it and sent as `<file id>.ach.pgp`. `null` or absent: files are sent as they are",
  });

/** The bank's SFTP server; the password or private key is write-only (never answered). */
export const bankLinkInput = z
  .strictObject({
    host: z.string().max(253).regex(REMOTE_HOST, { message: 'A host name or IPv4 address' }),
    port: z.number().int().min(1).max(65_535).meta({ format: 'int32' }).optional().default(22),
    username: z
      .string()
      .max(64)
      .regex(/^[A-Za-z0-9._-]+$/, { message: 'Letters, digits, `.`, `_` and `-`' }),
    remote_inbound_dir: remoteDirectory,
    remote_outbound_dir: remoteDirectory,
    host_key_fingerprint: z
      .string()
      .max(50)
      .regex(HOST_KEY_FINGERPRINT, { message: 'The host key fingerprint as `ssh-keygen -lf` prints it: SHA256:…' }),
    cutoff_time: z.string().max(5).regex(TIME_OF_DAY, { message: 'A time of day, HH:MM (24-hour, New York time)' }),
    password: z
      .string()
      .min(1)
      .max(256)
      .regex(/^[ -~]+$/, { message: 'Printable ASCII' })
      .optional(),
    private_key: z
      .string()
      .min(1)
      .max(16_384)
      .regex(/^-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+-----END [A-Z ]*PRIVATE KEY-----\s*$/, {
        message: 'A private key in PEM or OpenSSH form',
      })
      .optional(),
    pgp_public_key: pgpPublicKey.nullable().optional(),
  })
  .refine((l) => (l.password === undefined) !== (l.private_key === undefined), {
    message: 'Give exactly one of `password` and `private_key`',
    path: ['password'],
    params: { code: 'required' },
  });

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
  bank_link: bankLinkInput.nullable().optional(),
});
export type UpdateSettingsInput = z.infer<typeof updateSettingsBody>;
