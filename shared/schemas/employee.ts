import * as z from 'zod';
import {
  accountNumber,
  accountType,
  calendarDate,
  email,
  limitParam,
  lookupId,
  pageTokenParam,
  personName,
  routingNumber,
  text,
} from './common.js';

export const bankAccountInput = z.strictObject({
  account_number: accountNumber,
  routing_number: routingNumber,
  account_type: accountType,
});
export type BankAccountInput = z.infer<typeof bankAccountInput>;

const configuredValue = text(100).min(1);

export const createEmployeeBody = z.strictObject({
  first_name: personName,
  last_name: personName,
  email,
  employment_type: configuredValue,
  pay_group: configuredValue,
  pay_schedule: configuredValue,
  start_date: calendarDate,
  bank_account: bankAccountInput.nullable().optional(),
});
export type CreateEmployeeInput = z.infer<typeof createEmployeeBody>;

/** PATCH: any request field; `bank_account: null` removes direct deposit. */
export const updateEmployeeBody = createEmployeeBody.partial();
export type UpdateEmployeeInput = z.infer<typeof updateEmployeeBody>;

export const listEmployeesQuery = z.strictObject({
  limit: limitParam,
  page_token: pageTokenParam,
});

export const employeeIdParams = z.object({ id: lookupId });
