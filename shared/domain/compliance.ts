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

export const SIMULATE_REJECT_NOTE = 'simulate:reject';
/** Sandbox: an entry noted so makes its run fail in processing, after its paystubs are written. */
export const SIMULATE_FAIL_NOTE = 'simulate:fail';

/**
 * The checks a run must pass before money moves, run again at processing time because employees and settings
 * may have changed since submission: each employee still current with an active bank account and started by the
 * end of the period, per-employee and per-run net pay within the organization's caps. In the sandbox, an entry
 * noted `simulate:reject` fails the run on purpose so integrators can exercise the rejected path.
 */
export function complianceFindings(
  submission: PayrollSubmission,
  employees: ReadonlyMap<string, EmployeeFacts>,
  caps: { maxNetPerEmployee: Cents; maxPayrollTotal: Cents },
  environment: 'sandbox' | 'production',
): Finding[] {
  const findings: Finding[] = [];
  for (const entry of submission.employees) {
    const id = entry.employee_id;
    const e = employees.get(id);
    if (e?.status !== 'active') {
      findings.push({
        code: 'employee_not_found',
        message: `Employee ${id} is no longer a current employee`,
        employee_id: id,
      });
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
    if (environment === 'sandbox' && entry.notes === SIMULATE_REJECT_NOTE) {
      findings.push({
        code: 'simulated_rejection',
        message: 'Rejected on request (notes: simulate:reject)',
        employee_id: id,
      });
    }
  }
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
