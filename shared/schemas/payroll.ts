import * as z from 'zod';
import { isCalendarDate } from '../domain/dates.js';
import { InexactNumber } from '../domain/strict-json.js';
import type { ErrorKind, ProblemDetail } from '../domain/errors.js';
import type { Cents } from '../domain/money.js';
import { MAX_ENTRY_CENTS, MAX_TOTAL_CENTS } from '../domain/disbursement.js';
import { formatCents } from '../domain/money.js';
import {
  MAX_EMPLOYEES_PER_PAYROLL,
  netPay,
  periodDays,
  type PayrollEntry,
  type PayrollSubmission,
} from '../domain/payroll.js';
import { PAYROLL_STATUSES } from '../domain/payroll-status.js';
import {
  calendarDate,
  limitParam,
  lookupId,
  money,
  moneyForms,
  pageTokenParam,
  parseMoneyInput,
  text,
} from './common.js';
import { fieldPath, problemsFromZod } from './problems.js';

/** The contract's payroll problem codes, with the kind of refusal each one is. */
export const PAYROLL_PROBLEM_KIND = {
  invalid_request_body: 'invalid',
  invalid_date_range: 'invalid',
  negative_pay: 'invalid',
  missing_bank_account: 'unprocessable',
  employee_not_found: 'unprocessable',
  pay_date_too_soon: 'unprocessable',
  originator_not_configured: 'unprocessable',
  funding_hold: 'unprocessable',
  duplicate_payroll_window: 'conflict',
} as const satisfies Record<string, ErrorKind>;
export type PayrollProblemCode = keyof typeof PAYROLL_PROBLEM_KIND;

export const PAYROLL_PROBLEM_MESSAGE: Record<PayrollProblemCode, string> = {
  invalid_request_body: 'Invalid request body',
  invalid_date_range: 'Invalid date range',
  negative_pay: 'Negative pay',
  missing_bank_account: 'Missing bank account info',
  employee_not_found: 'Employee not found',
  pay_date_too_soon: 'Pay date too soon',
  originator_not_configured: 'Originator not configured',
  funding_hold: 'Funding hold',
  duplicate_payroll_window: 'Duplicate payroll window',
};

export interface PayrollProblem extends ProblemDetail {
  code: PayrollProblemCode;
  /** The finer reason (required, out_of_range, invalid_precision …), as for other endpoints' details. */
  reason?: string;
}

/** The longest hours text read (5 digits, a point and 2 decimals fit many times over). */
const MAX_HOURS_TEXT = 64;

const hours = z
  .unknown()
  .transform((raw, ctx): number => {
    // More digits than a double holds: read as sent, so `40.000000000000001` is refused rather than rounded.
    const value = raw instanceof InexactNumber ? raw.text : raw;
    if (typeof value !== 'number' && typeof value !== 'string') {
      const missing = value === undefined || value === null;
      ctx.addIssue({
        code: 'custom',
        message: missing ? 'hours_worked is required' : 'hours_worked must be a number',
        params: { code: missing ? 'required' : 'invalid_type' },
      });
      return z.NEVER;
    }
    if (typeof value === 'number' && !Number.isFinite(value)) {
      ctx.addIssue({
        code: 'custom',
        message: 'hours_worked must be a finite number',
        params: { code: 'invalid_format' },
      });
      return z.NEVER;
    }
    if (typeof value === 'string' && value.length > MAX_HOURS_TEXT) {
      ctx.addIssue({
        code: 'custom',
        message: `hours_worked is at most ${MAX_HOURS_TEXT} characters`,
        params: { code: 'invalid_format' },
      });
      return z.NEVER;
    }
    const text = typeof value === 'number' ? String(value) : value;
    if (text.trim() === '') {
      ctx.addIssue({ code: 'custom', message: 'hours_worked must not be blank', params: { code: 'required' } });
      return z.NEVER;
    }
    if (text.startsWith('-')) {
      ctx.addIssue({ code: 'custom', message: 'hours_worked must not be negative', params: { code: 'out_of_range' } });
      return z.NEVER;
    }
    const m = /^(\d{1,5})(?:\.(\d{1,2}))?$/.exec(text);
    if (!m) {
      ctx.addIssue({
        code: 'custom',
        message: 'hours_worked must be a number with at most two decimals',
        params: { code: 'invalid_format' },
      });
      return z.NEVER;
    }
    return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  })
  .meta({
    anyOf: [
      { type: 'number', minimum: 0, maximum: 99_999.99 },
      { type: 'string', maxLength: MAX_HOURS_TEXT, pattern: '^\\d{1,5}(?:\\.\\d{1,2})?$' },
    ],
    description: 'Required (not null, not blank): 0 up to the hours in the pay period, at most two decimals',
    example: 80,
  });

const DEDUCTION_NAME = /^[a-z][a-z0-9_]{0,39}$/;

/** A bare amount, or an object of named non-negative amounts (taxes, benefits, retirement, garnishments, other…). */
const deductions = z
  .unknown()
  .transform((value, ctx): Record<string, Cents> => {
    if (typeof value === 'number' || typeof value === 'string' || value instanceof InexactNumber) {
      const parsed = parseMoneyInput(value);
      if (parsed.ok) return { total: parsed.cents };
      ctx.addIssue({
        code: 'custom',
        message:
          parsed.reason === 'negative'
            ? 'Deductions must not be negative'
            : 'Must be a decimal amount with at most two decimals',
        params: { code: parsed.reason === 'negative' ? 'negative_pay' : 'invalid_amount' },
      });
      return z.NEVER;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      ctx.addIssue({
        code: 'custom',
        message: 'Must be an amount or an object of named amounts',
        params: { code: 'invalid_type' },
      });
      return z.NEVER;
    }
    const out: Record<string, Cents> = {};
    const entries = Object.entries(value);
    // Checked before reading any of them: 50,000 names are one problem, not 50,000.
    if (entries.length > 20) {
      ctx.addIssue({ code: 'custom', message: 'At most 20 named deductions', params: { code: 'out_of_range' } });
      return z.NEVER;
    }
    for (const [name, amount] of entries) {
      if (!DEDUCTION_NAME.test(name) || name === 'total') {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: 'Deduction names are snake_case (taxes, benefits, retirement, garnishments, other…)',
          params: { code: 'invalid_format' },
        });
        continue;
      }
      const parsed = parseMoneyInput(amount);
      if (parsed.ok) out[name] = parsed.cents;
      else
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message:
            parsed.reason === 'negative'
              ? 'Deductions must not be negative'
              : 'Must be a decimal amount with at most two decimals',
          params: { code: parsed.reason === 'negative' ? 'negative_pay' : 'invalid_amount' },
        });
    }
    return out;
  })
  .meta({
    anyOf: [
      ...moneyForms(),
      {
        type: 'object',
        maxProperties: 20,
        propertyNames: { maxLength: 40, pattern: '^(?!total$)[a-z][a-z0-9_]{0,39}$' },
        additionalProperties: { anyOf: moneyForms() },
      },
    ],
    description:
      'One amount, or named amounts (`taxes`, `benefits`, `retirement`, `garnishments`, `other`, any snake_case name but `total`)',
    example: { taxes: 640.5, benefits: 120 },
  });

const entrySchema = z.strictObject({
  employee_id: lookupId,
  gross_pay: money,
  hours_worked: hours,
  bonuses: money.optional(),
  deductions: deductions.optional(),
  notes: text(500).nullable().optional(),
});

const headerSchema = z.strictObject({
  type: z.enum(['regular', 'off_cycle']).optional(),
  pay_period_start: calendarDate,
  pay_period_end: calendarDate,
  pay_date: calendarDate,
  employees: z.unknown(),
});

/** For the OpenAPI document: the body `validatePayrollBody` checks, header and entries together. */
export const payrollBodySchemas = { header: headerSchema, entry: entrySchema };

const DATE_FIELDS = new Set(['pay_period_start', 'pay_period_end', 'pay_date']);

function toPayrollProblems(details: ProblemDetail[]): PayrollProblem[] {
  return details.map((d) => {
    const top = d.field?.split(/[.[]/)[0] ?? '';
    const code: PayrollProblemCode = DATE_FIELDS.has(top)
      ? 'invalid_date_range'
      : d.code === 'negative_pay'
        ? 'negative_pay'
        : 'invalid_request_body';
    return { ...d, code, reason: d.code };
  });
}

export class TooManyEmployeesError extends Error {}

/**
 * Validates a submission and reports every problem of the body at once, each with its entry index. Problems
 * that need storage (unknown employees, bank accounts, the window) are added by the use case.
 */
export function validatePayrollBody(body: Record<string, unknown>): {
  submission?: PayrollSubmission;
  problems: PayrollProblem[];
  /** The distinct non-empty string ids of the entries, valid or not, in order: the employees to look up. */
  employeeIds: string[];
} {
  if (Array.isArray(body.employees) && body.employees.length > MAX_EMPLOYEES_PER_PAYROLL)
    throw new TooManyEmployeesError();
  const problems: PayrollProblem[] = [];
  const header = headerSchema.safeParse(body);
  if (!header.success) for (const p of toPayrollProblems(problemsFromZod(header.error, body))) problems.push(p);

  const start =
    typeof body.pay_period_start === 'string' && isCalendarDate(body.pay_period_start)
      ? body.pay_period_start
      : undefined;
  const end =
    typeof body.pay_period_end === 'string' && isCalendarDate(body.pay_period_end) ? body.pay_period_end : undefined;
  const payDate = typeof body.pay_date === 'string' && isCalendarDate(body.pay_date) ? body.pay_date : undefined;
  if (start && end && end <= start) {
    problems.push({
      field: 'pay_period_end',
      code: 'invalid_date_range',
      reason: 'reversed',
      message: 'pay_period_end must be after pay_period_start',
    });
  }
  if (start && payDate && payDate < start) {
    problems.push({
      field: 'pay_date',
      code: 'invalid_date_range',
      reason: 'reversed',
      message: 'pay_date must not be before pay_period_start',
    });
  }
  const maxHundredths = start && end && end > start ? periodDays(start, end) * 24 * 100 : undefined;

  const rawEntries = body.employees;
  const entries: PayrollEntry[] = [];
  const seen = new Map<string, number>();
  if (rawEntries === undefined || rawEntries === null) {
    problems.push({
      field: 'employees',
      code: 'invalid_request_body',
      reason: 'required',
      message: 'employees is required',
    });
  } else if (!Array.isArray(rawEntries)) {
    problems.push({
      field: 'employees',
      code: 'invalid_request_body',
      reason: 'invalid_type',
      message: 'employees must be an array',
    });
  } else if (rawEntries.length === 0) {
    problems.push({
      field: 'employees',
      code: 'invalid_request_body',
      reason: 'too_short',
      message: 'A payroll pays at least one employee',
    });
  } else {
    rawEntries.forEach((raw, i) => {
      const prefix = ['employees', i];
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
        problems.push({
          field: fieldPath(prefix),
          code: 'invalid_request_body',
          reason: 'invalid_type',
          message: 'Each entry must be an object',
        });
        return;
      }
      const id = (raw as { employee_id?: unknown }).employee_id;
      if (typeof id === 'string' && id !== '') {
        const first = seen.get(id);
        if (first !== undefined) {
          problems.push({
            field: fieldPath([...prefix, 'employee_id']),
            code: 'invalid_request_body',
            reason: 'duplicate_employee',
            message: `This employee is already paid by employees[${first}]`,
          });
        } else {
          seen.set(id, i);
        }
      }
      const parsed = entrySchema.safeParse(raw);
      if (!parsed.success) {
        for (const p of toPayrollProblems(problemsFromZod(parsed.error, raw, prefix))) problems.push(p);
        return;
      }
      const e = parsed.data;
      const entry: PayrollEntry = {
        employee_id: e.employee_id,
        gross_pay: e.gross_pay,
        hours_worked_hundredths: e.hours_worked,
        bonuses: e.bonuses ?? 0,
        deductions: e.deductions ?? {},
        notes: e.notes ?? null,
      };
      if (maxHundredths !== undefined && entry.hours_worked_hundredths > maxHundredths) {
        problems.push({
          field: fieldPath([...prefix, 'hours_worked']),
          code: 'invalid_request_body',
          reason: 'out_of_range',
          message: `At most ${maxHundredths / 100} hours fit in the pay period`,
        });
      }
      // What a NACHA entry carries (CONTRACT §5): refused here, never found by the processor once paystubs exist.
      // Every amount parsed is below 10^13 dollars, so these plain sums are finite and compare correctly; the exact
      // (checked) arithmetic only runs once they are known to fit.
      const deductions = Object.values(entry.deductions).reduce((sum, cents) => sum + cents, 0);
      const amounts: [string[], number][] = [
        [['gross_pay'], entry.gross_pay],
        [['bonuses'], entry.bonuses],
        [['deductions'], deductions],
        [[], entry.gross_pay + entry.bonuses - deductions],
      ];
      let fits = true;
      for (const [field, cents] of amounts) {
        if (cents <= MAX_ENTRY_CENTS) continue;
        fits = false;
        problems.push({
          field: fieldPath([...prefix, ...field]),
          code: 'invalid_request_body',
          reason: 'out_of_range',
          message: `${field.length === 0 ? 'Net pay' : field[0]} is above ${formatCents(MAX_ENTRY_CENTS)}, the most one direct deposit carries`,
        });
      }
      if (!fits) return;
      if (netPay(entry) < 0) {
        problems.push({
          field: fieldPath(prefix),
          code: 'negative_pay',
          reason: 'net_pay_below_zero',
          message: 'Deductions exceed gross pay plus bonuses: net pay would be below zero',
        });
      }
      entries.push(entry);
    });
  }
  const netTotal = entries.reduce((sum, e) => sum + Math.max(0, netPay(e)), 0);
  if (netTotal > MAX_TOTAL_CENTS) {
    problems.push({
      field: 'employees',
      code: 'invalid_request_body',
      reason: 'out_of_range',
      message: `The net total is above ${formatCents(MAX_TOTAL_CENTS)}, the most one disbursement file carries: split the run`,
    });
  }
  const employeeIds = [...seen.keys()];
  if (problems.length > 0 || !header.success) return { problems, employeeIds };
  return {
    problems,
    employeeIds,
    submission: {
      type: header.data.type ?? 'regular',
      pay_period_start: header.data.pay_period_start,
      pay_period_end: header.data.pay_period_end,
      pay_date: header.data.pay_date,
      employees: entries,
    },
  };
}

export const listPayrollsQuery = z.strictObject({
  status: z.enum(PAYROLL_STATUSES).optional().meta({ description: 'Only runs in this status' }),
  from: calendarDate.optional().meta({ description: 'Only runs paid on or after this date' }),
  to: calendarDate.optional().meta({ description: 'Only runs paid on or before this date' }),
  limit: limitParam,
  page_token: pageTokenParam,
});

export const payrollIdParams = z.object({ id: lookupId });

export const submitPayrollQuery = z.strictObject({
  dry_run: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v === 'true')
    .meta({ description: '`true`: validate and compute the totals (200), storing nothing' }),
});
