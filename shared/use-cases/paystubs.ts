import {
  entryIndexOf,
  entryPaystubId,
  type PaystubFilters,
  type PaystubRecord,
  type PaystubRepository,
  runPrefixOf,
  type YearLine,
} from '../data/paystub-repository.js';
import type { PayrollRecord, PayrollRepository, RunOfPaystubs } from '../data/payroll-repository.js';
import type { Page } from '../data/paginate.js';
import { InvalidPageTokenError, NotFoundError } from '../domain/errors.js';
import { centsToNumber } from '../domain/money.js';
import { effectiveEntryDate } from '../domain/banking-calendar.js';
import { formatHours } from '../domain/payroll.js';
import { type ReversalReason, reversalWindowEnds } from '../domain/money-back.js';

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
      ...(p.payment.reversal && {
        reversal: {
          reason: p.payment.reversal.reason as ReversalReason,
          file_id: p.payment.reversal.file_id,
          trace_number: p.payment.reversal.trace_number,
          effective_entry_date: p.payment.reversal.effective_entry_date,
          scheduled_at: p.payment.reversal.scheduled_at,
          window_ends: reversalWindowEnds(p.payment.effective_entry_date ?? p.pay_date),
          ...(p.payment.reversal.return && { return: p.payment.reversal.return }),
        },
      }),
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

/**
 * One page of the organization's paystubs, pay date descending, then paystub id; filters combine with AND. By
 * employee: the employee index. Otherwise the paystubs are the ranges of ids of the runs that wrote them (one run
 * for a run filter; for a date range, the runs whose period overlaps it, as every paystub's period is its run's),
 * read by primary key: no index holds a whole run or a whole organization. The page token is where the page ended:
 * a pay date and a paystub id. Runs processed before paystubs were named by entry (a local data folder of an earlier
 * version) are in the lists by employee only.
 */
export async function listPaystubs(
  s: PaystubServices,
  orgId: string,
  filters: PaystubFilters,
  limit: number,
  startKey?: Record<string, unknown>,
): Promise<Page<PaystubRecord>> {
  if (filters.employeeId) {
    const page = await s.paystubs.listByEmployee(
      orgId,
      { ...filters, employeeId: filters.employeeId },
      limit,
      startKey,
    );
    const shown = await visibleRuns(
      s,
      orgId,
      page.items.map((p) => p.payroll_id),
    );
    return { items: page.items.filter((p) => shown.has(p.payroll_id)), lastKey: page.lastKey };
  }
  let runs: RunOfPaystubs[];
  if (filters.payrollId) {
    const run = await s.payrolls.get(orgId, filters.payrollId);
    runs = run && VISIBLE.has(run.status) && run.chunk_count !== null ? [run] : [];
  } else {
    runs = await s.payrolls.withPaystubs(orgId);
  }
  runs = runs.filter(
    (r) =>
      r.paystub_naming === 'entry' &&
      (!filters.from || r.pay_period_end >= filters.from) &&
      (!filters.to || r.pay_period_start <= filters.to),
  );
  if (startKey && (typeof startKey.pay_date !== 'string' || typeof startKey.paystub_id !== 'string'))
    // A token of another shape (one issued before lists were read run by run): refused, not read as the start.
    throw new InvalidPageTokenError();
  const after = startKey && { pay_date: String(startKey.pay_date), paystub_id: String(startKey.paystub_id) };
  // One past the page, so a page that ends the list says so (no token leading to an empty page).
  const found = await s.paystubs.firstExisting(orgId, paystubIdsInOrder(runs, after), limit + 1);
  if (found.items.length > limit) {
    const last = found.items[limit - 1]!;
    return { items: found.items.slice(0, limit), lastKey: { pay_date: last.pay_date, paystub_id: last.paystub_id } };
  }
  if (found.exhausted || found.last === undefined) return { items: found.items };
  // The read budget ran out among ids with no paystub: the page ends short, the next one starts past them.
  const lastRun = runs.find((r) => found.last!.startsWith(runPrefixOf(r.payroll_id)))!;
  return { items: found.items, lastKey: { pay_date: lastRun.pay_date, paystub_id: found.last } };
}

/**
 * The runs' paystub ids in list order, after `after`: pay date descending, then id. A run's ids are generated from
 * its size, already in order, and a run's ids all sort together (they share its prefix), so the runs of one pay
 * date follow each other by prefix; a page starts past `after` without generating what precedes it.
 */
function* paystubIdsInOrder(
  runs: readonly RunOfPaystubs[],
  after?: { pay_date: string; paystub_id: string },
): Generator<string> {
  const ordered = runs
    .map((r) => ({ run: r, prefix: runPrefixOf(r.payroll_id) }))
    .sort((a, b) =>
      a.run.pay_date !== b.run.pay_date ? (a.run.pay_date < b.run.pay_date ? 1 : -1) : a.prefix < b.prefix ? -1 : 1,
    );
  for (const { run, prefix } of ordered) {
    let i = 0;
    if (after && run.pay_date > after.pay_date) continue;
    if (after && run.pay_date === after.pay_date) {
      if (after.paystub_id.startsWith(prefix)) i = entryIndexOf(after.paystub_id) + 1;
      else if (after.paystub_id > prefix) continue;
    }
    for (; i < run.employee_count; i++) yield entryPaystubId(run.payroll_id, i);
  }
}

export interface YearToDate {
  gross_pay: number;
  bonuses: number;
  deductions: number;
  net_pay: number;
}

/**
 * Year-to-date totals as of each paystub: the employee's issued paystubs of the same calendar year, in pay-date
 * order then by id, up to and including it, of completed runs. Read from the employee index, one query per
 * employee-year of the page (in parallel), and one batched read of those paystubs' runs: a voided paystub is not
 * issued, and one of a run that has not completed (or is being cancelled) is not counted even before it is voided.
 * Nothing is written for it when a paystub is: the index the employee's list reads is the ledger.
 */
export async function yearToDate(
  s: PaystubServices,
  orgId: string,
  stubs: readonly PaystubRecord[],
): Promise<Map<string, YearToDate>> {
  const groups = new Map<string, PaystubRecord[]>();
  for (const stub of stubs) {
    const yearKey = `${stub.employee_id}#${stub.pay_date.slice(0, 4)}`;
    groups.set(yearKey, [...(groups.get(yearKey) ?? []), stub]);
  }
  const years = await Promise.all(
    [...groups.values()].map(async (group) => {
      const latest = group.reduce((a, b) => (asOf(b, a) ? a : b));
      const year = new Map<string, YearLine>(
        (await s.paystubs.yearOf(orgId, latest.employee_id, latest)).map((p) => [p.paystub_id, p]),
      );
      // The index is eventually consistent: the page's own paystubs count even if it has not caught up with them.
      for (const stub of group) year.set(stub.paystub_id, stub);
      return { group, year: [...year.values()].filter((p) => p.status === 'issued') };
    }),
  );
  const runIds = new Set(years.flatMap(({ year }) => year.map((p) => p.payroll_id)));
  const completed = new Set(
    (await s.payrolls.getMany(orgId, [...runIds])).filter((r) => r.status === 'completed').map((r) => r.payroll_id),
  );
  const out = new Map<string, YearToDate>();
  for (const { group, year } of years) {
    const counted = year.filter((p) => completed.has(p.payroll_id));
    for (const stub of group) out.set(stub.paystub_id, sumUpTo(counted, stub));
  }
  return out;
}

/** Whether `a` sorts at or before `b`: pay date, then paystub id. */
const asOf = (a: { pay_date: string; paystub_id: string }, b: { pay_date: string; paystub_id: string }) =>
  a.pay_date < b.pay_date || (a.pay_date === b.pay_date && a.paystub_id <= b.paystub_id);

function sumUpTo(year: readonly YearLine[], stub: PaystubRecord): YearToDate {
  const ytd = { gross_pay: 0, bonuses: 0, deductions: 0, net_pay: 0 };
  for (const p of year) {
    if (!asOf(p, stub)) continue;
    ytd.gross_pay += p.gross_pay;
    ytd.bonuses += p.bonuses;
    ytd.deductions += p.deductions_total;
    ytd.net_pay += p.net_pay;
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
