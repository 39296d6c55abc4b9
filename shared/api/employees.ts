import * as z from 'zod';
import type { EmployeeView } from '../use-cases/employees.js';
import { createEmployeeBody, employeeIdParams, listEmployeesQuery, updateEmployeeBody } from '../schemas/employee.js';
import {
  EXAMPLE_IDS,
  accountLast4,
  date,
  fits,
  id,
  page,
  printable,
  routingNumber,
  timestamp,
  type Fits,
} from './common.js';
import { routes } from './route.js';

export const employee = z
  .strictObject({
    employee_id: id('emp', EXAMPLE_IDS.employee),
    // What createEmployeeBody and updateEmployeeBody let in (shared/schemas/employee.ts).
    first_name: printable(100),
    last_name: printable(100),
    email: z.string().max(254).meta({ format: 'email' }),
    employment_type: printable(100).meta({ description: "One of the organization's `employment_types` (settings)" }),
    pay_group: printable(100).meta({ description: "One of the organization's `pay_groups` (settings)" }),
    pay_schedule: printable(100).meta({ description: "One of the organization's `pay_schedules` (settings)" }),
    start_date: date,
    status: z.enum(['active', 'removed']).meta({ description: '`removed` only in the answer to DELETE' }),
    bank_account: z
      .strictObject({
        account_type: z.enum(['checking', 'savings']),
        routing_number: routingNumber,
        account_number_last4: accountLast4,
        status: z.enum(['active', 'invalid']).meta({
          description:
            '`invalid`: the bank returned a deposit to this account as closed, missing or invalid (R02, R03, R04); the employee cannot be paid until a new `bank_account` is set',
        }),
        // `Deposit returned <code>: <its standard reason>` (shared/use-cases/disbursement-returns.ts).
        status_reason: printable(200)
          .nullable()
          .meta({ description: 'Why the account is `invalid`: the return that made it so; `null` while `active`' }),
        corrected_at: timestamp
          .nullable()
          .meta({ description: "When a bank's notification of change last corrected this account; `null` if never" }),
      })
      .nullable()
      .meta({ description: 'Never the full account number; `null` without direct deposit' }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Employee' });
fits<Fits<EmployeeView, typeof employee>>(true);

const BANK = { account_number: '123456789', routing_number: '021000021', account_type: 'checking' } as const;
const EMPLOYEE_EXAMPLE = {
  employee_id: EXAMPLE_IDS.employee,
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: 'ada@example.com',
  employment_type: 'full_time',
  pay_group: 'default',
  pay_schedule: 'biweekly',
  start_date: '2026-01-05',
  status: 'active',
  bank_account: {
    account_type: 'checking',
    routing_number: '021000021',
    account_number_last4: '6789',
    status: 'active',
    status_reason: null,
    corrected_at: null,
  },
  created_at: '2026-11-02T09:14:03.120Z',
  updated_at: '2026-11-02T09:14:03.120Z',
} satisfies z.input<typeof employee>;

const employeeParams = employeeIdParams.extend({
  id: employeeIdParams.shape.id.meta({ description: 'An employee id', example: EXAMPLE_IDS.employee }),
});
const EMPLOYEE = { schema: employee, envelope: 'EmployeeResponse' };
const CONFIGURED =
  "a value that is not one of the organization's configured `employment_types`, `pay_groups` or `pay_schedules` (`invalid_value` with `allowed`)";

export const employeeRoutes = routes('employees', {
  createEmployee: {
    method: 'POST',
    path: '/v1/employees',
    scope: 'write:employees',
    bucket: 'employee_write',
    summary: 'Onboard an employee',
    access: ['kms:encrypt:bank-account'],
    tag: 'Employees',
    description:
      "Onboards an employee. `email` is unique among the organization's active employees (case-insensitive); `employment_type`, `pay_group` and `pay_schedule` must exactly match a value configured in settings. The account number is envelope-encrypted and never returned.",
    body: {
      schema: createEmployeeBody,
      validatedBy: 'use-case',
      example: {
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'ada@example.com',
        employment_type: 'full_time',
        pay_group: 'default',
        pay_schedule: 'biweekly',
        start_date: '2026-01-05',
        bank_account: BANK,
      },
    },
    success: [
      {
        status: 201,
        description: "Created; `Location` is the employee's URL",
        ...EMPLOYEE,
        message: 'Employee created',
        example: EMPLOYEE_EXAMPLE,
        location: true,
      },
    ],
    errors: {
      400: `A field missing or malformed, an unknown field, or ${CONFIGURED}: every problem in \`details\``,
      409: '`employee_already_exists`: an active employee has this email',
      413: 'The body is over 6 MB',
    },
  },
  listEmployees: {
    method: 'GET',
    path: '/v1/employees',
    scope: 'read:employees',
    bucket: 'read',
    summary: 'List active employees',
    access: ['secret:signing'],
    tag: 'Employees',
    description: 'Active employees, oldest first.',
    query: listEmployeesQuery,
    success: [
      {
        status: 200,
        description: 'One page',
        schema: page('employees', employee),
        envelope: 'EmployeeListResponse',
        example: { employees: [EMPLOYEE_EXAMPLE], next_page_token: null },
      },
    ],
    errors: {
      400: 'An invalid `limit` or an unknown parameter (`invalid_request_body`), or an altered or foreign `page_token` (`invalid_page_token`)',
    },
  },
  getEmployee: {
    method: 'GET',
    path: '/v1/employees/{id}',
    scope: 'read:employees',
    bucket: 'read',
    summary: 'Get an employee',
    access: [],
    tag: 'Employees',
    description: 'One active employee.',
    params: employeeParams,
    success: [{ status: 200, description: 'The employee', ...EMPLOYEE, example: EMPLOYEE_EXAMPLE }],
    errors: { 404: 'No active employee with this id in your organization' },
  },
  updateEmployee: {
    method: 'PATCH',
    path: '/v1/employees/{id}',
    scope: 'write:employees',
    bucket: 'employee_write',
    summary: 'Update an employee',
    access: ['kms:encrypt:bank-account'],
    tag: 'Employees',
    description:
      'Changes any request field; `bank_account: null` removes direct deposit. Concurrent PATCHes of different fields all land.',
    params: employeeParams,
    body: {
      schema: updateEmployeeBody,
      validatedBy: 'use-case',
      example: {
        pay_schedule: 'semimonthly',
        bank_account: { account_number: '987654321', routing_number: '011000015', account_type: 'savings' },
      },
    },
    success: [
      {
        status: 200,
        description: 'The updated employee',
        ...EMPLOYEE,
        message: 'Employee updated',
        example: { ...EMPLOYEE_EXAMPLE, pay_schedule: 'semimonthly' },
      },
    ],
    errors: {
      400: `A malformed or unknown field, or ${CONFIGURED}`,
      404: 'No active employee with this id in your organization',
      409: '`employee_already_exists` (the new email belongs to another active employee) or `conflict` (retry)',
      413: 'The body is over 6 MB',
    },
  },
  deleteEmployee: {
    method: 'DELETE',
    path: '/v1/employees/{id}',
    scope: 'write:employees',
    bucket: 'employee_write',
    summary: 'Remove an employee',
    access: [],
    tag: 'Employees',
    description:
      'Removes an employee: it can no longer be paid, answers 404 afterwards, and its email may be onboarded again. Its paystubs stay readable.',
    params: employeeParams,
    success: [
      {
        status: 200,
        description: 'The removed employee (`status: removed`)',
        ...EMPLOYEE,
        message: 'Employee removed',
        example: { ...EMPLOYEE_EXAMPLE, status: 'removed' },
      },
    ],
    errors: {
      404: 'No active employee with this id in your organization',
      409: '`conflict`: modified concurrently, retry',
    },
  },
});
