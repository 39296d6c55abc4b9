import {
  type LedgerLine,
  ledgerLineOf,
  type PaystubFilters,
  type PaystubRecord,
  type PaystubRepository,
} from '../data/paystub-repository.js';
import type { PayrollRecord, PayrollRepository } from '../data/payroll-repository.js';
import type { Page } from '../data/paginate.js';
import { NotFoundError } from '../domain/errors.js';
import { centsToNumber } from '../domain/money.js';
import { effectiveEntryDate } from '../domain/banking-calendar.js';
import { formatHours } from '../domain/payroll.js';

export interface PaystubServices {
  paystubs: PaystubRepository;
  payrolls: PayrollRepository;
}

/**
 * Paystubs are written while their run is processing; until the run has an outcome they are not shown (the
 * spec: paystubs exist for runs that completed, after a short delay). A stub of a completed run is `issued`; of a
 * cancelled or failed one, `voided`, and still readable.
 */
const VISIBLE: ReadonlySet<PayrollRecord['status']> = new Set(['completed', 'cancelled', 'failed']);

/**
 * Every visible status is final for visibility (completed may only become cancelled, also visible), so a run seen
 * visible once is remembered for the container's life and a page of paystubs usually costs no extra read.
 */
const knownVisible = new Set<string>();

async function visibleRuns(s: PaystubServices, orgId: string, payrollIds: Iterable<string>): Promise<Set<string>> {
  const ids = [...new Set(payrollIds)];
  const unknown = ids.filter((id) => !knownVisible.has(`${orgId}/${id}`));
  if (unknown.length > 0) {
    for (const run of await s.payrolls.getMany(orgId, unknown)) {
      if (!VISIBLE.has(run.status)) continue;
      if (knownVisible.size >= 50_000) knownVisible.clear();
      knownVisible.add(`${orgId}/${run.payroll_id}`);
    }
  }
  return new Set(ids.filter((id) => knownVisible.has(`${orgId}/${id}`)));
}

export function paystubView(
  p: PaystubRecord,
  ytd?: { gross_pay: number; bonuses: number; deductions: number; net_pay: number },
) {
  return {
    paystub_id: p.paystub_id,
    employee_id: p.employee_id,
    payroll_id: p.payroll_id,
    employee_name: p.employee_name,
    period_start: p.period_start,
    period_end: p.period_end,
    pay_date: p.pay_date,
    issued_date: p.issued_date,
    status: p.status,
    hours_worked: Number(formatHours(p.hours_worked_hundredths)),
    gross_pay: centsToNumber(p.gross_pay),
    bonuses: centsToNumber(p.bonuses),
    deductions: {
      ...Object.fromEntries(Object.entries(p.deductions).map(([k, v]) => [k, centsToNumber(v)])),
      total: centsToNumber(p.deductions_total),
    },
    benefits: centsToNumber(p.deductions.benefits ?? 0),
    net_pay: centsToNumber(p.net_pay),
    payment: {
      method: p.payment.method,
      account_type: p.payment.account_type,
      account_number_last4: p.payment.account_number_last4,
      routing_number: p.payment.routing_number,
      trace_number: p.payment.trace_number,
      status: p.payment.status,
      effective_entry_date:
        p.payment.effective_entry_date ?? (p.payment.trace_number === null ? null : effectiveEntryDate(p.pay_date)),
      ...(p.payment.return && { return: p.payment.return }),
    },
    notes: p.notes,
    ...(ytd && {
      year_to_date: {
        gross_pay: centsToNumber(ytd.gross_pay),
        bonuses: centsToNumber(ytd.bonuses),
        deductions: centsToNumber(ytd.deductions),
        net_pay: centsToNumber(ytd.net_pay),
      },
    }),
    created_at: p.created_at,
  };
}
export type PaystubView = ReturnType<typeof paystubView>;

export async function listPaystubs(
  s: PaystubServices,
  orgId: string,
  filters: PaystubFilters,
  limit: number,
  startKey?: Record<string, unknown>,
): Promise<Page<PaystubRecord>> {
  const page = await s.paystubs.list(orgId, filters, limit, startKey);
  const shown = await visibleRuns(
    s,
    orgId,
    page.items.map((p) => p.payroll_id),
  );
  return { items: page.items.filter((p) => shown.has(p.payroll_id)), lastKey: page.lastKey };
}

export interface YearToDate {
  gross_pay: number;
  bonuses: number;
  deductions: number;
  net_pay: number;
}

/**
 * Year-to-date totals as of each paystub: the employee's issued paystubs of the same calendar year, in pay-date
 * order then by id, up to and including it, of completed runs. Summed from each employee's ledger of the year (one
 * batched read for a whole page, and one for the runs' statuses: never a query per paystub). A voided paystub's line
 * left the ledger when it was voided, and a line of a run that did not complete is not counted even if it stayed.
 * An employee-year without a ledger (paystubs written before ledgers existed) is summed from the employee index,
 * once per employee-year, in parallel.
 */
export async function yearToDate(
  s: PaystubServices,
  orgId: string,
  stubs: readonly PaystubRecord[],
): Promise<Map<string, YearToDate>> {
  const ledgers = await s.paystubs.ledgers(orgId, stubs);
  const runIds = new Set<string>();
  for (const ledger of ledgers.values()) for (const line of ledger.values()) runIds.add(line.payroll_id);
  const completed = new Set(
    (await s.payrolls.getMany(orgId, [...runIds])).filter((r) => r.status === 'completed').map((r) => r.payroll_id),
  );
  const out = new Map<string, YearToDate>();
  const legacy = new Map<string, PaystubRecord[]>();
  for (const stub of stubs) {
    const yearKey = `${stub.employee_id}#${stub.pay_date.slice(0, 4)}`;
    const ledger = ledgers.get(yearKey);
    if (!ledger || (stub.status === 'issued' && !ledger.has(stub.paystub_id))) {
      legacy.set(yearKey, [...(legacy.get(yearKey) ?? []), stub]);
      continue;
    }
    const lines = [...ledger].map(([id, line]) => ({ ...line, paystub_id: id }));
    out.set(
      stub.paystub_id,
      sumUpTo(lines, stub, (l) => completed.has(l.payroll_id)),
    );
  }
  await Promise.all(
    [...legacy.values()].map(async (group) => {
      const latest = group.reduce((a, b) => (asOf(b, a) ? a : b));
      const year = (await s.paystubs.yearOf(orgId, latest.employee_id, latest)).filter((p) => p.status === 'issued');
      const shown = await visibleRuns(
        s,
        orgId,
        year.map((p) => p.payroll_id),
      );
      const lines = year.map((p) => ({ ...ledgerLineOf(p), paystub_id: p.paystub_id }));
      for (const stub of group)
        out.set(
          stub.paystub_id,
          sumUpTo(lines, stub, (l) => shown.has(l.payroll_id)),
        );
    }),
  );
  return out;
}

/** Whether `a` sorts at or before `b`: pay date, then paystub id. */
const asOf = (a: { pay_date: string; paystub_id: string }, b: { pay_date: string; paystub_id: string }) =>
  a.pay_date < b.pay_date || (a.pay_date === b.pay_date && a.paystub_id <= b.paystub_id);

function sumUpTo(
  lines: readonly (LedgerLine & { paystub_id: string })[],
  stub: PaystubRecord,
  counts: (line: LedgerLine) => boolean,
): YearToDate {
  const ytd = { gross_pay: 0, bonuses: 0, deductions: 0, net_pay: 0 };
  for (const line of lines) {
    if (!asOf(line, stub) || !counts(line)) continue;
    ytd.gross_pay += line.gross_pay;
    ytd.bonuses += line.bonuses;
    ytd.deductions += line.deductions;
    ytd.net_pay += line.net_pay;
  }
  return ytd;
}

/** A paystub with its year-to-date totals. */
export async function getPaystub(s: PaystubServices, orgId: string, paystubId: string) {
  const stub = await s.paystubs.get(orgId, paystubId);
  if (!stub || !(await visibleRuns(s, orgId, [stub.payroll_id])).has(stub.payroll_id)) throw new NotFoundError();
  const ytd = (await yearToDate(s, orgId, [stub])).get(stub.paystub_id)!;
  return { stub, ytd };
}
