import { describe, expect, it } from 'vitest';
import { sandboxBank } from '../../shared/adapters/sandbox-bank.js';
import { complianceFindings } from '../../shared/domain/compliance.js';
import {
  PAYROLL_STATUSES,
  canTransition,
  isTerminal,
  sourcesOf,
  type PayrollStatus,
} from '../../shared/domain/payroll-status.js';
import { deterministicId } from '../../shared/adapters/ids.js';

const allowed: [PayrollStatus, PayrollStatus][] = [
  // CONTRACT §11: a run awaiting approval is approved (→ pending) or cancelled.
  ['awaiting_approval', 'pending'],
  ['awaiting_approval', 'cancelled'],
  ['pending', 'processing'],
  ['pending', 'failed'],
  ['pending', 'cancelled'],
  ['processing', 'completed'],
  ['processing', 'rejected'],
  ['processing', 'failed'],
  ['processing', 'cancelled'],
  ['completed', 'cancelled'],
];

describe('payroll state machine', () => {
  const all = PAYROLL_STATUSES.flatMap((from) => PAYROLL_STATUSES.map((to) => [from, to] as const));
  it.each(all)('%s → %s', (from, to) => {
    const expected = allowed.some(([f, t]) => f === from && t === to);
    expect(canTransition(from, to)).toBe(expected);
  });

  it('never moves backwards and never leaves a terminal status except completed → cancelled', () => {
    for (const s of ['rejected', 'failed', 'cancelled'] as const)
      expect(PAYROLL_STATUSES.some((t) => canTransition(s, t))).toBe(false);
    expect(canTransition('processing', 'pending')).toBe(false);
    expect(canTransition('completed', 'processing')).toBe(false);
    expect(isTerminal('pending')).toBe(false);
    expect(isTerminal('processing')).toBe(false);
  });

  it('derives the condition of each transition from the table', () => {
    expect(sourcesOf('cancelled').sort()).toEqual(['awaiting_approval', 'completed', 'pending', 'processing']);
    expect(sourcesOf('processing')).toEqual(['pending']);
  });
});

describe('compliance checks', () => {
  const submission = {
    type: 'regular' as const,
    pay_period_start: '2026-11-01',
    pay_period_end: '2026-11-14',
    pay_date: '2026-11-20',
    employees: [
      { employee_id: 'a', gross_pay: 100_000, hours_worked_hundredths: 8000, bonuses: 0, deductions: {}, notes: null },
      {
        employee_id: 'b',
        gross_pay: 50_000,
        hours_worked_hundredths: 8000,
        bonuses: 0,
        deductions: {},
        notes: 'simulate:reject',
      },
    ],
  };
  const facts = new Map([
    ['a', { status: 'active' as const, start_date: '2026-01-01', hasActiveBankAccount: true }],
    ['b', { status: 'active' as const, start_date: '2026-11-15', hasActiveBankAccount: false }],
  ]);

  it('finds each failed check with the employee it concerns', () => {
    const findings = complianceFindings(
      submission,
      facts,
      { maxNetPerEmployee: 90_000, maxPayrollTotal: 140_000 },
      sandboxBank.reviewEntries(submission),
    );
    expect(findings.map((f) => [f.code, f.employee_id])).toEqual([
      ['net_pay_cap_exceeded', 'a'],
      ['missing_bank_account', 'b'],
      ['employee_not_started', 'b'],
      ['simulated_rejection', 'b'],
      ['payroll_total_cap_exceeded', null],
    ]);
  });

  it('passes a clean run, and ignores the simulation note in production', () => {
    const ok = new Map([...facts].map(([k, v]) => [k, { ...v, start_date: '2026-01-01', hasActiveBankAccount: true }]));
    expect(complianceFindings(submission, ok, { maxNetPerEmployee: 250_000_00, maxPayrollTotal: 1e10 })).toEqual([]);
    expect(
      complianceFindings(
        submission,
        new Map(),
        { maxNetPerEmployee: 1e9, maxPayrollTotal: 1e10 },
        sandboxBank.reviewEntries(submission),
      ).map((f) => f.code),
    ).toEqual(['employee_not_found', 'employee_not_found']);
  });
});

describe('derived ids', () => {
  it('are stable, distinct and well formed', () => {
    const a = deterministicId('stub', 'pay_1', 'emp_1');
    expect(deterministicId('stub', 'pay_1', 'emp_1')).toBe(a);
    expect(deterministicId('stub', 'pay_1', 'emp_2')).not.toBe(a);
    expect(deterministicId('stub', 'pay_1emp_1', '')).not.toBe(a);
    expect(a).toMatch(/^stub_[0-9a-hjkmnp-tv-z]{26}$/);
  });
});
