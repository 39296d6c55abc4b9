import { TIME_OF_DAY } from '../domain/banking-calendar.js';
import { APPROVAL_MODES, DEFAULT_FILE_RETENTION_DAYS, MAX_FILE_RETENTION_DAYS } from '../domain/settings.js';
import * as z from 'zod';
import type { settingsView } from '../use-cases/settings.js';
import { updateSettingsBody } from '../schemas/settings.js';
import { ACH_CHARACTERS } from '../domain/ach-text.js';
import { ARMORED_PUBLIC_KEY, MAX_PGP_PUBLIC_KEY_CHARS } from '../domain/bank-link.js';
import {
  EXAMPLE_IDS,
  EXAMPLE_ORIGINATOR,
  accountLast4,
  amount,
  fits,
  id,
  int32,
  printable,
  returnCode,
  routingNumber,
  timestamp,
  type Fits,
} from './common.js';
import { routes } from './route.js';

/** What updateSettingsBody lets in (shared/schemas/settings.ts), and the defaults (shared/domain/settings.ts). */
const configuredValues = z.array(printable(100)).max(50);
/** ACH text as stored: uppercase letters, digits, spaces and `& ' - . , /`, trimmed (shared/domain/ach-text.ts). */
const achName = (max: number) =>
  z
    .string()
    .max(max)
    .regex(new RegExp(`^[${ACH_CHARACTERS}]+$`));

export const settings = z
  .strictObject({
    employment_types: configuredValues,
    pay_groups: configuredValues,
    pay_schedules: configuredValues,
    max_net_pay_per_employee: amount.meta({ description: "Compliance cap on one employee's net pay in a run" }),
    max_payroll_total: amount.meta({ description: "Compliance cap on a run's total net pay" }),
    payroll_approval: z.enum(APPROVAL_MODES).meta({
      description:
        '`automatic`: a run is approved when it is accepted (the sandbox default). `required`: it waits in `awaiting_approval`, moving no money, until another key or person approves it (`POST /v1/payroll/{id}/approve`; the default of a new production organization)',
    }),
    approval_cutoff_time: z.string().max(5).regex(TIME_OF_DAY).meta({
      description:
        'HH:MM, New York time: a run must be approved by its `release_by` day at this time (its `approve_by`)',
      example: '15:00',
    }),
    file_retention_days: z.number().int().min(DEFAULT_FILE_RETENTION_DAYS).max(MAX_FILE_RETENTION_DAYS).meta({
      format: 'int32',
      description:
        "Days each NACHA file is kept under a retention lock once written (at least 730: NACHA keeps entries two years). A cancelled or failed run's file is destroyed whatever the lock: its key is erased, so it can never be read again.",
      example: 730,
    }),
    originator: z
      .strictObject({
        company_name: achName(16).meta({
          description: "Batch header: the name on employees' statements (16 characters of ACH text)",
        }),
        company_identification: z
          .string()
          .max(10)
          .regex(/^[0-9A-Z]{10}$/)
          .meta({ description: 'Batch header: the company id your bank assigned (10 characters)' }),
        originating_dfi_identification: z
          .string()
          .max(8)
          .regex(/^\d{8}$/)
          .meta({
            description:
              "Batch header and trace numbers: the first 8 digits of your bank's (the ODFI's) routing number",
          }),
        immediate_destination: routingNumber.meta({
          description: 'File header: the routing number the file is sent to (9 digits, valid check digit)',
        }),
        immediate_destination_name: achName(23),
        immediate_origin: z
          .string()
          .max(10)
          .regex(/^(?: [0-9A-Z]{9}|[0-9A-Z]{10})$/)
          .meta({ description: 'File header: 10 characters your bank assigned (or a space and 9)' }),
        immediate_origin_name: achName(23),
      })
      .meta({
        description:
          'What the NACHA file carries. A production organization starts with placeholders (all zeros, `NOT CONFIGURED`) and cannot submit payroll until each is set',
      }),
    originator_placeholders: z
      .array(
        z.enum([
          'company_name',
          'company_identification',
          'originating_dfi_identification',
          'immediate_destination',
          'immediate_destination_name',
          'immediate_origin',
          'immediate_origin_name',
        ]),
      )
      .max(7)
      .meta({
        description:
          'The originator fields still holding the placeholder the organization was created with: payroll answers 422 `originator_not_configured` until this is empty (always empty in the sandbox)',
      }),
    funding_account: z
      .strictObject({
        routing_number: routingNumber,
        account_number_last4: accountLast4,
        account_type: z.enum(['checking', 'savings']),
      })
      .nullable()
      .meta({
        description:
          "The employer account each file's offset debit draws on (balanced files); `null`: files carry credits only",
      }),
    funding_hold: z
      .strictObject({
        payroll_id: id('pay', EXAMPLE_IDS.payroll),
        code: returnCode,
        since: timestamp,
      })
      .nullable()
      .meta({
        description:
          "Set by the service when the bank returns a run's funding debit: new payrolls and approvals answer 422 `funding_hold` until it is re-debited (`POST /v1/payroll/{id}/funding/redebit`) or paid otherwise (`POST /v1/payroll/{id}/funding/resolve`). Read-only; the oldest hold when there are several",
      }),
    bank_link: z
      .strictObject({
        host: z
          .string()
          .max(253)
          .regex(/^[A-Za-z0-9.-]+$/),
        port: int32(1, 65_535),
        username: z
          .string()
          .max(64)
          .regex(/^[A-Za-z0-9._-]+$/),
        remote_inbound_dir: z
          .string()
          .max(201)
          .regex(/^\/[A-Za-z0-9._/-]*$/),
        remote_outbound_dir: z
          .string()
          .max(201)
          .regex(/^\/[A-Za-z0-9._/-]*$/),
        host_key_fingerprint: z
          .string()
          .max(50)
          .regex(/^SHA256:[A-Za-z0-9+/]{43}$/),
        cutoff_time: z.string().max(5).regex(TIME_OF_DAY),
        credential: z.enum(['password', 'private_key']).meta({ description: 'Which secret is kept (never answered)' }),
        pgp_public_key: z.string().max(MAX_PGP_PUBLIC_KEY_CHARS).regex(ARMORED_PUBLIC_KEY).nullable().meta({
          description:
            "The bank's OpenPGP public key (armored, not secret): files are encrypted to it and sent as `<file id>.ach.pgp`; `null`: sent as they are",
        }),
        pgp_key_fingerprint: z
          .string()
          .max(64)
          .regex(/^[0-9A-F]{40,64}$/)
          .nullable()
          .meta({ description: "The PGP key's fingerprint (hex, upper case), to compare with the one the bank gives" }),
      })
      .nullable()
      .meta({
        description:
          "The bank's SFTP server the service delivers each ready file to and picks returns and acknowledgements up from; `null`: files are sent by hand",
      }),
    updated_at: timestamp,
  })
  .meta({ id: 'Settings' });
fits<Fits<ReturnType<typeof settingsView>, typeof settings>>(true);

const SETTINGS = {
  employment_types: ['full_time', 'part_time', 'contractor'],
  pay_groups: ['default'],
  pay_schedules: ['weekly', 'biweekly', 'semimonthly', 'monthly'],
  max_net_pay_per_employee: 250000,
  max_payroll_total: 100000000,
  file_retention_days: 730,
  payroll_approval: 'automatic',
  approval_cutoff_time: '15:00',
  originator: EXAMPLE_ORIGINATOR,
  originator_placeholders: [],
  funding_account: { routing_number: '021000021', account_number_last4: '6789', account_type: 'checking' },
  funding_hold: null,
  bank_link: null,
  updated_at: '2026-11-02T09:10:00.000Z',
} satisfies z.input<typeof settings>;

export const settingsRoutes = routes('admin', {
  getSettings: {
    method: 'GET',
    path: '/v1/settings',
    scope: 'admin',
    bucket: 'read',
    summary: 'Get organization settings',
    access: [],
    tag: 'Settings',
    description:
      "The values employees' `employment_type`, `pay_group` and `pay_schedule` must match, the compliance caps, and the NACHA originator.",
    success: [
      { status: 200, description: 'The settings', schema: settings, envelope: 'SettingsResponse', example: SETTINGS },
    ],
  },
  updateSettings: {
    method: 'PATCH',
    path: '/v1/settings',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Update organization settings',
    access: ['kms:encrypt:bank-account'],
    tag: 'Settings',
    description:
      "Replaces the lists it names and merges `originator` field by field. Originator fields are checked as strictly as the NACHA file needs them (400 naming the field): `immediate_destination` a routing number with a valid check digit, `immediate_origin` and `company_identification` 10 digits or uppercase letters (a leading space allowed in `immediate_origin`), names ACH text (stored uppercase), no all-zero placeholder. `funding_account` (`{routing_number, account_number, account_type}`, checked like an employee's) makes every later file balanced; `null` removes it. The account number is encrypted and answered as its last 4 digits.",
    body: {
      schema: updateSettingsBody,
      example: {
        pay_groups: ['default', 'hourly'],
        max_net_pay_per_employee: '300000.00',
        originator: { company_name: 'ACME CORP' },
        funding_account: { routing_number: '021000021', account_number: '000123456789', account_type: 'checking' },
      },
    },
    success: [
      {
        status: 200,
        description: 'The updated settings',
        schema: settings,
        envelope: 'SettingsResponse',
        message: 'Settings updated',
        example: {
          ...SETTINGS,
          pay_groups: ['default', 'hourly'],
          max_net_pay_per_employee: 300000,
          originator: { ...SETTINGS.originator, company_name: 'ACME CORP' },
        },
      },
    ],
    errors: {
      400: 'A malformed, duplicate or unknown field',
      409: '`conflict`: modified concurrently, retry',
      413: 'The body is over 6 MB',
    },
  },
});
