import { createHash } from 'node:crypto';
import { withCheckDigit } from './aba.js';
import { achText } from './ach-text.js';
import type { BankLink } from './bank-link.js';

export type Environment = 'sandbox' | 'production';

/** NACHA originator details an organization's disbursement files carry. */
export interface Originator {
  company_name: string;
  company_identification: string;
  originating_dfi_identification: string;
  immediate_destination: string;
  immediate_destination_name: string;
  immediate_origin: string;
  immediate_origin_name: string;
}

export type OriginatorField = keyof Originator;

/** The employer's account each balanced file draws its offset debit on. */
export interface FundingAccount {
  routing_number: string;
  account_type: 'checking' | 'savings';
  account_number_last4: string;
  /** Envelope-encrypted full account number; it leaves the service only inside a NACHA file. */
  account_number_ciphertext: string;
}

export interface OrganizationSettings {
  employment_types: string[];
  pay_groups: string[];
  pay_schedules: string[];
  /** Money as a decimal string with two places (the API answers numbers). */
  max_net_pay_per_employee: string;
  max_payroll_total: string;
  originator: Originator;
  /**
   * The originator fields still holding the placeholder the organization was created with (production only);
   * absent on organizations created before it was tracked: see `placeholdersOf`.
   */
  originator_placeholders?: OriginatorField[];
  funding_account: FundingAccount | null;
  /** `required`: a run waits for a second key or person to approve it (absent: `automatic`, accepted = approved). */
  payroll_approval?: ApprovalMode;
  /** `HH:MM`, New York time: a run must be approved by its release day at this time (absent: `15:00`). */
  approval_cutoff_time?: string;
  /** Days each NACHA file is kept locked against deletion (absent: `DEFAULT_FILE_RETENTION_DAYS`). */
  file_retention_days?: number;
  /**
   * When the organization's files began drawing trace numbers and file ID modifiers from its own sequences: its
   * creation. Absent on organizations created before, whose earlier files numbered each run from 1 with modifier A
   * (`reserve` starts their sequences clear of those).
   */
  sequences_since?: string;
  /** How files reach the bank and what it sends back is picked up (absent or null: by hand). */
  bank_link?: BankLink | null;
  updated_at: string;
}

/**
 * What a production organization starts with: values no bank would take and no PATCH accepts (all-zero identifiers
 * are refused), so a file can never carry them by accident. Until every one is replaced, payroll is refused.
 */
const PRODUCTION_PLACEHOLDER: Omit<Originator, 'company_name'> = {
  company_identification: '0000000000',
  originating_dfi_identification: '00000000',
  immediate_destination: '000000000',
  immediate_destination_name: 'NOT CONFIGURED',
  immediate_origin: '0000000000',
  immediate_origin_name: 'NOT CONFIGURED',
};

/**
 * The defaults of organizations created before placeholders were tracked: a production organization that still
 * holds one of these never set it (the sandbox bank's routing number named SANDBOX BANK, company id zeros).
 */
const LEGACY_DEFAULTS: Partial<Originator> = {
  company_identification: '0000000000',
  originating_dfi_identification: '02100002',
  immediate_destination: '021000021',
  immediate_destination_name: 'SANDBOX BANK',
  immediate_origin: '1000000001',
  immediate_origin_name: 'PAYROLL API',
};

/** The originator fields a payroll file cannot carry yet: none in the sandbox. */
export function placeholdersOf(settings: OrganizationSettings, environment: Environment): OriginatorField[] {
  if (environment !== 'production') return [];
  if (settings.originator_placeholders) return settings.originator_placeholders;
  return (Object.keys(LEGACY_DEFAULTS) as OriginatorField[]).filter(
    (f) => settings.originator[f] === LEGACY_DEFAULTS[f],
  );
}

/**
 * A sandbox ODFI of the organization's own, derived from its id: trace numbers are the ODFI's 8 digits and the
 * organization's sequence, so organizations sharing one test ODFI would hand out the same trace numbers.
 * Leading 0 and a second digit 0–9 keep it a Federal Reserve routing symbol with a valid check digit.
 */
export function sandboxOdfi(organizationId: string): string {
  const digest = createHash('sha256').update(organizationId).digest();
  return `0${String(digest.readUInt32BE(0) % 10_000_000).padStart(7, '0')}`;
}

export function defaultSettings(
  organization: { id: string; name: string },
  environment: Environment,
  now: Date,
): OrganizationSettings {
  const companyName = achText(organization.name).slice(0, 16).trim() || 'PAYROLL CO';
  const odfi = sandboxOdfi(organization.id);
  const originator: Originator =
    environment === 'production'
      ? { company_name: companyName, ...PRODUCTION_PLACEHOLDER }
      : {
          company_name: companyName,
          company_identification: '1000000001',
          originating_dfi_identification: odfi,
          immediate_destination: withCheckDigit(odfi),
          immediate_destination_name: 'SANDBOX BANK',
          immediate_origin: '1000000001',
          immediate_origin_name: 'PAYROLL API',
        };
  return {
    employment_types: ['full_time', 'part_time', 'contractor'],
    pay_groups: ['default'],
    pay_schedules: ['weekly', 'biweekly', 'semimonthly', 'monthly'],
    max_net_pay_per_employee: '250000.00',
    max_payroll_total: '100000000.00',
    originator,
    originator_placeholders:
      environment === 'production' ? (Object.keys(PRODUCTION_PLACEHOLDER) as OriginatorField[]) : [],
    funding_account: null,
    file_retention_days: DEFAULT_FILE_RETENTION_DAYS,
    // A new production organization approves by a second person; the sandbox accepts as approved, as before.
    payroll_approval: environment === 'production' ? 'required' : 'automatic',
    approval_cutoff_time: DEFAULT_APPROVAL_CUTOFF_TIME,
    sequences_since: now.toISOString(),
    updated_at: now.toISOString(),
  };
}

/** NACHA's record retention: an originator keeps each entry's record two years. Never configured shorter. */
export const DEFAULT_FILE_RETENTION_DAYS = 730;
export const MAX_FILE_RETENTION_DAYS = 3650;

export const APPROVAL_MODES = ['automatic', 'required'] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];
export const DEFAULT_APPROVAL_CUTOFF_TIME = '15:00';

/** How runs are approved; an organization made before approval existed keeps today's behaviour: automatic. */
export function approvalMode(settings: Pick<OrganizationSettings, 'payroll_approval'>): ApprovalMode {
  return settings.payroll_approval ?? 'automatic';
}

export function approvalCutoffTime(settings: Pick<OrganizationSettings, 'approval_cutoff_time'>): string {
  return settings.approval_cutoff_time ?? DEFAULT_APPROVAL_CUTOFF_TIME;
}

export function fileRetentionDays(settings: Pick<OrganizationSettings, 'file_retention_days'>): number {
  return settings.file_retention_days ?? DEFAULT_FILE_RETENTION_DAYS;
}

export const CONFIGURED_FIELDS = {
  employment_type: 'employment_types',
  pay_group: 'pay_groups',
  pay_schedule: 'pay_schedules',
} as const satisfies Record<string, keyof OrganizationSettings>;
