import * as z from 'zod';
import type { settingsView } from '../../use-cases/settings.js';
import { originatorInput, updateSettingsBody } from '../settings.js';
import { amount, fits, timestamp, type Fits } from './common.js';
import type { Operations } from './operation.js';

export const settings = z
  .strictObject({
    employment_types: z.array(z.string()),
    pay_groups: z.array(z.string()),
    pay_schedules: z.array(z.string()),
    max_net_pay_per_employee: amount.meta({ description: 'Compliance cap on one employee\'s net pay in a run' }),
    max_payroll_total: amount.meta({ description: 'Compliance cap on a run\'s total net pay' }),
    originator: originatorInput.meta({ description: 'What the NACHA file carries' }),
    updated_at: timestamp,
  })
  .meta({ id: 'Settings' });
fits<Fits<ReturnType<typeof settingsView>, typeof settings>>(true);

const SETTINGS = {
  employment_types: ['full_time', 'part_time', 'contractor'], pay_groups: ['default'], pay_schedules: ['weekly', 'biweekly', 'semimonthly', 'monthly'],
  max_net_pay_per_employee: 250000, max_payroll_total: 100000000,
  originator: {
    company_name: 'ACME', company_identification: '1000000001', originating_dfi_identification: '02100002', immediate_destination: '021000021',
    immediate_destination_name: 'SANDBOX BANK', immediate_origin: '1000000001', immediate_origin_name: 'PAYROLL API',
  },
  updated_at: '2026-11-02T09:10:00.000Z',
} satisfies z.input<typeof settings>;

export const settingsOperations = {
  getSettings: {
    tag: 'Settings',
    description: 'The values employees\' `employment_type`, `pay_group` and `pay_schedule` must match, the compliance caps, and the NACHA originator.',
    success: [{ status: 200, description: 'The settings', schema: settings, envelope: 'SettingsResponse', example: SETTINGS }],
  },
  updateSettings: {
    tag: 'Settings',
    description: 'Replaces the lists it names and merges `originator` field by field.',
    body: { schema: updateSettingsBody, example: { pay_groups: ['default', 'hourly'], max_net_pay_per_employee: '300000.00', originator: { company_name: 'ACME CORP' } } },
    success: [{ status: 200, description: 'The updated settings', schema: settings, envelope: 'SettingsResponse', message: 'Settings updated', example: { ...SETTINGS, pay_groups: ['default', 'hourly'], max_net_pay_per_employee: 300000 } }],
    errors: { 400: 'A malformed, duplicate or unknown field', 409: '`conflict`: modified concurrently, retry', 413: 'The body is over 6 MB' },
  },
} satisfies Operations;
