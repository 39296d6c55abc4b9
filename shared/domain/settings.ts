import type { Environment } from '../adapters/tokens.js';

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

export interface OrganizationSettings {
  employment_types: string[];
  pay_groups: string[];
  pay_schedules: string[];
  /** Money as a decimal string with two places (the API answers numbers). */
  max_net_pay_per_employee: string;
  max_payroll_total: string;
  originator: Originator;
  updated_at: string;
}

export function defaultSettings(organizationName: string, environment: Environment, now: Date): OrganizationSettings {
  return {
    employment_types: ['full_time', 'part_time', 'contractor'],
    pay_groups: ['default'],
    pay_schedules: ['weekly', 'biweekly', 'semimonthly', 'monthly'],
    max_net_pay_per_employee: '250000.00',
    max_payroll_total: '100000000.00',
    originator: {
      // Sandbox defaults: a test ODFI and a recognisable company id. Production organizations set their own.
      company_name: organizationName.toUpperCase().replace(/[^A-Z0-9 ]/g, '').slice(0, 16) || 'PAYROLL CO',
      company_identification: environment === 'production' ? '0000000000' : '1000000001',
      originating_dfi_identification: '02100002',
      immediate_destination: '021000021',
      immediate_destination_name: 'SANDBOX BANK',
      immediate_origin: '1000000001',
      immediate_origin_name: 'PAYROLL API',
    },
    updated_at: now.toISOString(),
  };
}

export const CONFIGURED_FIELDS = {
  employment_type: 'employment_types',
  pay_group: 'pay_groups',
  pay_schedule: 'pay_schedules',
} as const satisfies Record<string, keyof OrganizationSettings>;
