import type { PayrollRecord } from '../data/payroll-repository.js';
import { disbursementDates, fileNumbering } from '../domain/disbursement.js';
import { centsToNumber } from '../domain/money.js';
import type { Blocker } from '../domain/errors.js';
import { PAYROLL_TRANSITIONS } from '../domain/payroll-lifecycle.js';
import type { Totals } from '../domain/payroll.js';

/** The statuses a run is accepted in: as the lifecycle's two acceptance events declare them. */
export const ACCEPTED_STATUSES = [PAYROLL_TRANSITIONS.submit.to, PAYROLL_TRANSITIONS.submit_for_approval.to] as const;
type AcceptedStatus = (typeof ACCEPTED_STATUSES)[number];

function totals(t: Totals) {
  return {
    gross_pay: centsToNumber(t.gross_pay),
    bonuses: centsToNumber(t.bonuses),
    deductions: centsToNumber(t.deductions),
    net_pay: centsToNumber(t.net_pay),
  };
}

/** Entries written so far: the sizes of the finished chunks (every chunk is full but possibly the last). */
export function progressOf(r: PayrollRecord): { total: number; done: number } {
  if (r.status === 'completed') return { total: r.employee_count, done: r.employee_count };
  let done = 0;
  for (const chunk of r.chunks_done)
    done += Math.max(0, Math.min(r.chunk_size, r.employee_count - chunk * r.chunk_size));
  return { total: r.employee_count, done };
}

/**
 * What a submission answers (202, and every replay of it): only what cannot change afterwards, so a replay
 * 24 hours later is byte-for-byte the first answer. The current state is read with GET /v1/payroll/{id}.
 */
function submitted(r: PayrollRecord, employeeIds: string[]) {
  return {
    payroll_id: r.payroll_id,
    // The status it was accepted in, not the current one: a replay a day later answers exactly the first answer.
    status: (r.status_history[0]?.status ?? r.status) as AcceptedStatus,
    approve_by: r.approve_by,
    type: r.type,
    pay_period_start: r.pay_period_start,
    pay_period_end: r.pay_period_end,
    pay_date: r.pay_date,
    ...disbursementDates(r.pay_date),
    employee_ids: employeeIds,
    employee_count: r.employee_count,
    totals: totals(r.totals),
    content_hash: r.content_hash,
    created_at: r.created_at,
  };
}

function summary(r: PayrollRecord) {
  return {
    payroll_id: r.payroll_id,
    status: r.status,
    type: r.type,
    pay_period_start: r.pay_period_start,
    pay_period_end: r.pay_period_end,
    pay_date: r.pay_date,
    ...disbursementDates(r.pay_date),
    employee_count: r.employee_count,
    totals: totals(r.totals),
    progress: progressOf(r),
    approve_by: r.approve_by,
    content_hash: r.content_hash,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** The file's control totals, once written, and what identifies it at the bank. */
function disbursementTotals(r: PayrollRecord) {
  return (
    r.disbursement && {
      entry_count: r.disbursement.entry_count,
      entry_hash: r.disbursement.entry_hash,
      total_credit: centsToNumber(r.disbursement.total_credit),
      total_debit: centsToNumber(r.disbursement.total_debit),
      batch_count: r.disbursement.batch_count,
      block_count: r.disbursement.block_count,
      file_id_modifier: fileNumbering(r).fileIdModifier,
      effective_entry_date: disbursementDates(r.pay_date).effective_entry_date,
      created_at: r.disbursement.created_at,
      file_id: r.disbursement.file_id ?? null,
    }
  );
}

/**
 * `approval`: for a run awaiting approval, what stops it as read now and what it will pay each employee; null
 * (both) for a run in any other status.
 */
function full(
  r: PayrollRecord,
  employeeIds: string[],
  approval: { blockers: Blocker[]; netPay: { employee_id: string; net_pay: number }[] } | null = null,
) {
  return {
    ...summary(r),
    employee_ids: employeeIds,
    blockers: approval?.blockers ?? null,
    net_pay_by_employee: approval?.netPay ?? null,
    submitted_by: r.submitted_by,
    approved_by: r.approved_by,
    status_history: r.status_history.map((h) => ({ status: h.status, at: h.at, reason: h.reason ?? null })),
    findings: r.findings.map((f) => ({ code: f.code, message: f.message, employee_id: f.employee_id ?? null })),
    disbursement: disbursementTotals(r),
    returns: { count: r.returns_count, amount: centsToNumber(r.returns_amount) },
    funding: fundingView(r.funding),
    reversals: { count: r.reversals_count, amount: centsToNumber(r.reversals_amount) },
    failure_reason: r.failure_reason,
  };
}

/** The run's funding as the API answers it (amounts in dollars). */
export function fundingView(f: PayrollRecord['funding']) {
  if (!f) return null;
  return {
    status: f.status,
    amount: centsToNumber(f.amount),
    trace_number: f.trace_number,
    effective_entry_date: f.effective_entry_date,
    ...(f.return && { return: f.return }),
    redebits: f.redebits.map((r) => ({
      file_id: r.file_id,
      trace_number: r.trace_number,
      amount: centsToNumber(r.amount),
      effective_entry_date: r.effective_entry_date,
      created_at: r.created_at,
      ...(r.return && { return: r.return }),
    })),
    ...(f.resolution && { resolution: f.resolution }),
  };
}

export const payrollView = { totals, submitted, summary, full, disbursementTotals };
export type PayrollView = ReturnType<typeof submitted>;
