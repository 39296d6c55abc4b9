import * as z from 'zod';
import { money } from './common.js';

const valueList = z
  .array(z.string().min(1).max(100))
  .min(1)
  .max(50)
  .refine((list) => new Set(list).size === list.length, { message: 'Values must be unique', params: { code: 'duplicate_value' } });

const digits = (n: number) => z.string().regex(new RegExp(`^\\d{${n}}$`), { message: `Must be ${n} digits` });
const achText = (max: number) =>
  z.string().min(1).max(max).regex(/^[A-Za-z0-9 .,&'\-/]+$/, { message: 'Only letters, digits, spaces and . , & \' - /' });

export const originatorInput = z.strictObject({
  company_name: achText(16),
  company_identification: z.string().regex(/^[A-Za-z0-9 ]{10}$/, { message: 'Must be 10 characters' }),
  originating_dfi_identification: digits(8),
  immediate_destination: digits(9),
  immediate_destination_name: achText(23),
  immediate_origin: z.string().regex(/^[A-Za-z0-9 ]{10}$/, { message: 'Must be 10 characters' }),
  immediate_origin_name: achText(23),
});

export const updateSettingsBody = z.strictObject({
  employment_types: valueList.optional(),
  pay_groups: valueList.optional(),
  pay_schedules: valueList.optional(),
  max_net_pay_per_employee: money.optional(),
  max_payroll_total: money.optional(),
  originator: originatorInput.partial().optional(),
});
export type UpdateSettingsInput = z.infer<typeof updateSettingsBody>;
