import { formatCents, type Cents } from './money.js';
import { netPay, payrollTotals, type PayrollSubmission } from './payroll.js';

export interface Finding {
  code: string;
  message: string;
  employee_id: string | null;
}

export interface EmployeeFacts {
  status: 'active' | 'removed';
  start_date: string;
  hasActiveBankAccount: boolean;
}

/**
 * The checks a run must pass before money moves, run again at processing time because employees and settings
 * may have changed since submission: each employee still current with an active bank account and started by the
 * end of the period, per-employee and per-run net pay within the organization's caps. The findings the bank
 * raises on the entries (`bankFindings`, each naming its employee) come with that employee's own, in entry order.
 */
export function complianceFindings(
  submission: PayrollSubmission,
  employees: ReadonlyMap<string, EmployeeFacts>,
  caps: { maxNetPerEmployee: Cents; maxPayrollTotal: Cents },
  bankFindings: readonly Finding[] = [],
): Finding[] {
  const findings: Finding[] = [];
  const byEmployee = new Map<string | null, Finding[]>();
  for (const f of bankFindings) byEmployee.set(f.employee_id, [...(byEmployee.get(f.employee_id) ?? []), f]);
  for (const entry of submission.employees) {
    const id = entry.employee_id;
    const e = employees.get(id);
    if (e?.status !== 'active') {
      findings.push({
        code: 'employee_not_found',
        message: `Employee ${id} is no longer a current employee`,
        employee_id: id,
      });
      // Nothing more is said of an employee who is no longer one, the bank's findings neither.
      byEmployee.delete(id);
      continue;
    }
    if (!e.hasActiveBankAccount)
      findings.push({
        code: 'missing_bank_account',
        message: `Employee ${id} has no active bank account on file`,
        employee_id: id,
      });
    if (e.start_date > submission.pay_period_end) {
      findings.push({
        code: 'employee_not_started',
        message: `Employee ${id} starts on ${e.start_date}, after the pay period ends`,
        employee_id: id,
      });
    }
    const net = netPay(entry);
    if (net > caps.maxNetPerEmployee) {
      findings.push({
        code: 'net_pay_cap_exceeded',
        message: `Net pay ${formatCents(net)} exceeds the per-employee cap of ${formatCents(caps.maxNetPerEmployee)}`,
        employee_id: id,
      });
    }
    findings.push(...(byEmployee.get(id) ?? []));
    byEmployee.delete(id);
  }
  // The bank's findings on no entry of the run's, after the entries'.
  for (const rest of byEmployee.values()) findings.push(...rest);
  const total = payrollTotals(submission.employees).net_pay;
  if (total > caps.maxPayrollTotal) {
    findings.push({
      code: 'payroll_total_cap_exceeded',
      message: `Total net pay ${formatCents(total)} exceeds the per-payroll cap of ${formatCents(caps.maxPayrollTotal)}`,
      employee_id: null,
    });
  }
  return findings;
}
