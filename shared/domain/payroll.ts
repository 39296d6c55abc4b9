import { createHash } from 'node:crypto';
import { addCents, formatCents, sumCents, type Cents } from './money.js';

export type PayrollType = 'regular' | 'off_cycle';

/** One validated entry, money in cents, hours in hundredths. */
export interface PayrollEntry {
  employee_id: string;
  gross_pay: Cents;
  hours_worked_hundredths: number;
  bonuses: Cents;
  /** Named amounts; a bare number given by the client is kept as `{ total }`. */
  deductions: Record<string, Cents>;
  notes: string | null;
}

export interface PayrollSubmission {
  type: PayrollType;
  pay_period_start: string;
  pay_period_end: string;
  pay_date: string;
  employees: PayrollEntry[];
}

export interface Totals {
  gross_pay: Cents;
  bonuses: Cents;
  deductions: Cents;
  net_pay: Cents;
}

export const MAX_EMPLOYEES_PER_PAYROLL = 25_000;

export function deductionsTotal(entry: Pick<PayrollEntry, 'deductions'>): Cents {
  return sumCents(Object.values(entry.deductions));
}

/** net = gross_pay + bonuses − total deductions, exactly, in cents. */
export function netPay(entry: Pick<PayrollEntry, 'gross_pay' | 'bonuses' | 'deductions'>): Cents {
  return addCents(entry.gross_pay, entry.bonuses) - deductionsTotal(entry);
}

export function payrollTotals(entries: readonly PayrollEntry[]): Totals {
  let gross = 0;
  let bonuses = 0;
  let deductions = 0;
  for (const e of entries) {
    gross = addCents(gross, e.gross_pay);
    bonuses = addCents(bonuses, e.bonuses);
    deductions = addCents(deductions, deductionsTotal(e));
  }
  return { gross_pay: gross, bonuses, deductions, net_pay: addCents(gross, bonuses) - deductions };
}

/** Days in the period, both ends included. */
export function periodDays(start: string, end: string): number {
  return Math.round((Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / 86_400_000) + 1;
}

export function formatHours(hundredths: number): string {
  return (hundredths / 100).toFixed(2);
}

/**
 * The canonical form of a submission: fixed key order, money and hours as two-decimal strings, deductions
 * sorted by name. Two bodies that mean the same payroll (whitespace, key order, 10 vs "10.00") hash the same.
 */
export function canonicalSubmission(s: PayrollSubmission): string {
  return JSON.stringify({
    type: s.type,
    pay_period_start: s.pay_period_start,
    pay_period_end: s.pay_period_end,
    pay_date: s.pay_date,
    employees: s.employees.map((e) => ({
      employee_id: e.employee_id,
      gross_pay: formatCents(e.gross_pay),
      hours_worked: formatHours(e.hours_worked_hundredths),
      bonuses: formatCents(e.bonuses),
      deductions: Object.fromEntries(
        Object.keys(e.deductions)
          .sort()
          .map((k) => [k, formatCents(e.deductions[k]!)]),
      ),
      notes: e.notes,
    })),
  });
}

export function contentHash(s: PayrollSubmission): string {
  return createHash('sha256').update(canonicalSubmission(s)).digest('hex');
}
