import type { FieldEncryptor } from '../adapters/envelope-encryption.js';
import { METRIC_NAMES } from '../adapters/metric-names.js';
import { parseReturnFile } from '../adapters/nacha-returns.js';
import { businessMetrics } from '../adapters/observability.js';
import type { EmployeeRecord, EmployeeRepository } from '../data/employee-repository.js';
import { backoff, inParallel } from '../data/batch.js';
import type { TransactItems } from '../data/item.js';
import type { PayrollRecord } from '../data/payroll-repository.js';
import type { TraceOwner } from '../data/disbursement-sequence-repository.js';
import { paystubIdOf, type PaystubRecord } from '../data/paystub-repository.js';
import { InvalidRequestError, type ProblemDetail } from '../domain/errors.js';
import { centsToNumber } from '../domain/money.js';
import {
  ACCOUNT_UNUSABLE_CODES,
  type BankReportItem,
  type CorrectedAccount,
  isCorrectionCode,
  type ReportOutcome,
  RETURN_REASONS,
} from '../domain/returns.js';
import { bankReportBody, MAX_REPORT_ITEMS } from '../schemas/disbursement-returns.js';
import { problemsFromZod } from '../schemas/problems.js';
import { dispatchQuietly } from './events.js';
import { applyMoneyBackReturn, type MoneyBackEntry } from './money-back/returns.js';
import type { MoneyBackReturnServices } from './money-back/services.js';
import { payrollEmployeeIds } from './payroll-employee-ids.js';

/*
 * What the bank reports back about a released file, applied to the payments it is about. Every item is matched by
 * the trace number the entry carried (unique per organization and ODFI), and applied at most once: each write is
 * a transaction conditioned on the payment not carrying that return (or correction) yet, so the same report sent
 * twice, or twice at once, changes each payment once and emits each event once.
 */

export interface ReturnServices extends MoneyBackReturnServices {
  employees: EmployeeRepository;
  encryptor: FieldEncryptor;
}

export interface ItemOutcome {
  trace_number: string;
  type: 'return' | 'correction';
  code: string;
  outcome: ReportOutcome;
  paystub_id?: string;
  /** A correction: whether the employee's account was changed (it was still the account the deposit went to). */
  account_updated?: boolean;
  /** An entry that was not an employee's deposit: a run's funding debit (or re-debit), a reversal's entry. */
  entry?: MoneyBackEntry;
  payroll_id?: string;
}

/** The items of a report: the bank's file (text) or the JSON form. Nothing is returned unless all of it is valid. */
export function readBankReport(body: string | Record<string, unknown>): BankReportItem[] {
  if (typeof body === 'string') {
    const reading = parseReturnFile(body);
    if (!reading.ok)
      throw new InvalidRequestError(
        reading.problems.map(
          (p): ProblemDetail => ({
            field: `line ${p.line}`,
            code: 'invalid_record',
            message: `Line ${p.line}: ${p.message}`,
          }),
        ),
      );
    if (reading.items.length > MAX_REPORT_ITEMS)
      throw new InvalidRequestError([
        {
          code: 'too_big',
          message: `A report may carry at most ${MAX_REPORT_ITEMS} items; this file has ${reading.items.length}: post it in parts`,
        },
      ]);
    return reading.items;
  }
  const parsed = bankReportBody.safeParse(body);
  if (!parsed.success) throw new InvalidRequestError(problemsFromZod(parsed.error, body));
  return [
    ...parsed.data.returns.map((r): BankReportItem => ({ type: 'return', trace_number: r.trace_number, code: r.code })),
    ...parsed.data.corrections.map(
      (c): BankReportItem => ({
        type: 'correction',
        trace_number: c.trace_number,
        code: c.code,
        corrected: c.corrected,
      }),
    ),
  ];
}

/**
 * Items about different payments are applied in parallel, this many at once; those about one payment in order.
 * Kept small: every return of a run also adds to the run's own counter, and transactions meeting on that one item
 * are cancelled and retried.
 */
const CONCURRENCY = 4;

export async function applyBankReport(
  s: ReturnServices,
  orgId: string,
  items: readonly BankReportItem[],
): Promise<ItemOutcome[]> {
  const outcomes: ItemOutcome[] = new Array(items.length);
  const byPayment = new Map<string, number[]>();
  for (const [i, item] of items.entries()) {
    const key = `${item.type}#${item.trace_number}`;
    byPayment.set(key, [...(byPayment.get(key) ?? []), i]);
  }
  const lookups = reportLookups(s, orgId);
  const find = paymentFinder(s, orgId, lookups);
  await inParallel([...byPayment.values()], CONCURRENCY, async (group) => {
    for (const i of group) outcomes[i] = await applyItem(s, orgId, items[i]!, find, lookups);
  });
  return outcomes;
}

/** What one report reads, read once for all of its items: each run, and the owner of each trace number. */
export interface ReportLookups {
  run(payrollId: string): Promise<PayrollRecord | undefined>;
  owner(traceNumber: string): Promise<TraceOwner | undefined>;
}

function reportLookups(s: ReturnServices, orgId: string): ReportLookups {
  const memo = <T>(load: (key: string) => Promise<T>) => {
    const seen = new Map<string, Promise<T>>();
    return (key: string) => {
      if (!seen.has(key)) seen.set(key, load(key));
      return seen.get(key)!;
    };
  };
  return {
    run: memo((payrollId) => s.payrolls.get(orgId, payrollId)),
    owner: memo((trace) => s.sequences.ownerOf(orgId, trace)),
  };
}

interface Found {
  stub: PaystubRecord;
  payroll: PayrollRecord;
}

/**
 * Trace number → the deposit's paystub and its run, through the run's block of sequences (runs planned before
 * blocks were recorded are found from their `trace_start`, read once per report) and, for a run whose paystubs are
 * named by employee, its stored list of employees.
 * Only a deposit that was released (its payment `scheduled` or `returned`) is found: a cancelled run's file never
 * reached the bank. Runs are read once per report.
 */
function paymentFinder(s: ReturnServices, orgId: string, { run, owner }: ReportLookups) {
  let planned: Promise<PayrollRecord[]> | undefined;
  const entryOf = async (trace: string) => {
    const block = await owner(trace);
    // A trace in a block is that block's: an offset or another file's entry is no deposit.
    if (block) return block.kind === 'payroll' && block.index < block.entries ? block : undefined;
    // No block at all: a run planned before blocks were recorded, found from its `trace_start`.
    planned ??= s.payrolls.listPlanned(orgId);
    const sequence = Number(trace.slice(8));
    const covering = (await planned).find(
      (r) =>
        r.trace_start !== null &&
        r.originator?.originating_dfi_identification === trace.slice(0, 8) &&
        sequence >= r.trace_start &&
        sequence < r.trace_start + r.employee_count,
    );
    return covering && { payrollId: covering.payroll_id, index: sequence - covering.trace_start! };
  };
  return async (item: BankReportItem): Promise<Found | undefined> => {
    const entry = await entryOf(item.trace_number);
    if (!entry) return undefined;
    const payroll = await run(entry.payrollId);
    // A file's batch names the originator whose entries it returns: another company's batch is not about this run.
    if (
      !payroll ||
      (item.company_identification !== undefined &&
        item.company_identification !== payroll.originator?.company_identification)
    )
      return undefined;
    if (entry.index >= payroll.employee_count) return undefined;
    // A run named by entry needs no list of its employees; one named by employee reads it from its stored body.
    const employeeId =
      payroll.paystub_naming === 'entry'
        ? ''
        : (await payrollEmployeeIds(s.objects, orgId, entry.payrollId))[entry.index];
    if (employeeId === undefined) return undefined;
    const stub = await s.paystubs.get(orgId, paystubIdOf(payroll, entry.index, employeeId));
    if (stub?.payment.trace_number !== item.trace_number) return undefined;
    // A reversed deposit may still come back (its account closed): the return is its own, recorded beside the reversal.
    const reversed = stub.payment.status === 'reversal_scheduled' || stub.payment.status === 'reversal_returned';
    if (
      stub.payment.status !== 'scheduled' &&
      stub.payment.status !== 'returned' &&
      !(reversed && item.type === 'return')
    )
      return undefined;
    return { stub, payroll };
  };
}

async function applyItem(
  s: ReturnServices,
  orgId: string,
  item: BankReportItem,
  find: (item: BankReportItem) => Promise<Found | undefined>,
  lookups: ReportLookups,
): Promise<ItemOutcome> {
  const base = { trace_number: item.trace_number, type: item.type, code: item.code };
  const found = await find(item);
  if (!found) {
    // Not an employee's deposit: the run's funding debit, a re-debit, or a reversal's entry (CONTRACT §12).
    const back = item.type === 'return' ? await applyMoneyBackReturn(s, orgId, item, lookups) : undefined;
    return back ? { ...base, ...back } : { ...base, outcome: 'unknown_trace' };
  }
  const { stub } = found;
  const known = { ...base, paystub_id: stub.paystub_id };
  if (item.type === 'return') {
    // A bank's return carries the original entry's amount: any other amount is not that deposit coming back.
    if (item.amount_cents !== undefined && item.amount_cents !== stub.net_pay)
      return { ...known, outcome: 'amount_mismatch' };
    if (stub.payment.return) return { ...known, outcome: 'already_applied' };
    const applied = await applyReturn(s, stub, item.code);
    if (applied) return { ...known, outcome: 'applied' };
    // Another request returned it first, or the run was cancelled in between.
    const now = await s.paystubs.get(stub.organization_id, stub.paystub_id);
    return { ...known, outcome: now?.payment.return ? 'already_applied' : 'unknown_trace' };
  }
  if (stub.payment.correction)
    return { ...known, outcome: 'already_applied', account_updated: stub.payment.correction.applied };
  const applied = await applyCorrection(s, stub, item.code, item.unusable === undefined ? item.corrected : undefined);
  return applied === 'already_applied'
    ? { ...known, outcome: 'already_applied', account_updated: false }
    : { ...known, outcome: 'applied', account_updated: applied };
}

/**
 * The employee's account is still the one the payment went to (a replaced or corrected account is left alone): the
 * same account reference when either carries one; for a deposit and an account both older than references, the same
 * routing number, last four digits and type.
 */
function paidAccount(
  e: EmployeeRecord | undefined,
  stub: PaystubRecord,
): e is EmployeeRecord & {
  bank_account: NonNullable<EmployeeRecord['bank_account']>;
} {
  const bank = e?.bank_account;
  if (e?.status !== 'active' || !bank) return false;
  // An account that carries a reference was set or corrected since references exist: only the very one paid matches.
  if (bank.account_ref || stub.payment.account_ref) return bank.account_ref === stub.payment.account_ref;
  return (
    bank.routing_number === stub.payment.routing_number &&
    bank.account_number_last4 === stub.payment.account_number_last4 &&
    bank.account_type === stub.payment.account_type
  );
}

const ATTEMPTS = 8;

/**
 * Marks the payment returned, counts it in the run's `returns`, records `payment.returned` and, for R02/R03/R04,
 * marks the employee's account `invalid` (if it is still the account paid), in one transaction. Returns false if
 * the payment was already returned (another request got there first).
 */
async function applyReturn(s: ReturnServices, stub: PaystubRecord, code: string): Promise<boolean> {
  const now = s.deps.now().toISOString();
  const reason = RETURN_REASONS[code]!;
  const event = {
    event_id: s.deps.newId('evt'),
    organization_id: stub.organization_id,
    type: 'payment.returned' as const,
    payroll_id: stub.payroll_id,
    data: {
      paystub_id: stub.paystub_id,
      employee_id: stub.employee_id,
      payroll_id: stub.payroll_id,
      amount: centsToNumber(stub.net_pay),
      code,
      reason,
      trace_number: stub.payment.trace_number,
      returned_at: now,
    },
    created_at: now,
  };
  for (let attempt = 1; ; attempt++) {
    const items: TransactItems = [
      s.paystubs.returnItem(stub, { code, reason, returned_at: now }),
      s.payrolls.returnTallyItem(stub.organization_id, stub.payroll_id, stub.net_pay),
      ...s.events.items([event]),
    ];
    const employee = ACCOUNT_UNUSABLE_CODES.includes(code)
      ? await s.employees.get(stub.organization_id, stub.employee_id)
      : undefined;
    if (paidAccount(employee, stub) && employee.bank_account.status === 'active') {
      items.push(
        s.employees.replaceItem(employee, {
          ...employee,
          bank_account: {
            ...employee.bank_account,
            status: 'invalid',
            status_reason: `Deposit returned ${code}: ${reason}`,
          },
          version: employee.version + 1,
          updated_at: now,
        }),
      );
    }
    const committed = await s.transactions.write(items);
    if (committed === 'ok') {
      // At the write that returned the payment: a report applied again finds it returned and counts nothing.
      businessMetrics.count(METRIC_NAMES.returnsApplied);
      break;
    }
    if (committed[0]) return false; // the payment is returned already, or no longer scheduled
    if (attempt >= ATTEMPTS) throw new Error(`Could not apply the return of ${stub.payment.trace_number}`);
    // The employee changed between the read and the write, or another transaction met this one: again.
    await backoff(attempt);
  }
  await dispatchQuietly(s, [event]);
  return true;
}

/**
 * Records the notification of change on the payment and, when the employee's account is still the one paid,
 * corrects it (the new account number encrypted like any other) and records `employee.bank_account_corrected`.
 * Returns whether the account was changed, or 'already_applied'.
 */
async function applyCorrection(
  s: ReturnServices,
  stub: PaystubRecord,
  code: string,
  /** Undefined: the data could not be applied (recorded, not applied). */
  corrected: CorrectedAccount | undefined,
): Promise<boolean | 'already_applied'> {
  const orgId = stub.organization_id;
  const ciphertext = corrected?.account_number ? await s.encryptor.encrypt(corrected.account_number, orgId) : undefined;
  for (let attempt = 1; ; attempt++) {
    const now = s.deps.now().toISOString();
    const employee = await s.employees.get(orgId, stub.employee_id);
    const applies = corrected !== undefined && isCorrectionCode(code) && paidAccount(employee, stub);
    const items: TransactItems = [s.paystubs.correctionItem(stub, { code, received_at: now, applied: applies })];
    const events = [];
    if (applies && corrected) {
      const bank = employee.bank_account;
      const account = {
        ...bank,
        ...(corrected.routing_number && { routing_number: corrected.routing_number }),
        ...(corrected.account_type && { account_type: corrected.account_type }),
        ...(corrected.account_number && {
          account_number_last4: corrected.account_number.slice(-4),
          account_number_ciphertext: ciphertext!,
        }),
        corrected_at: now,
        // A corrected account is a new version with a reference of its own: a late return or change notice about
        // a deposit made to the old details (its trace names the old reference) can no longer touch it.
        account_ref: s.deps.newId('acct'),
      };
      items.push(
        s.employees.replaceItem(employee, {
          ...employee,
          bank_account: account,
          version: employee.version + 1,
          updated_at: now,
        }),
      );
      events.push({
        event_id: s.deps.newId('evt'),
        organization_id: orgId,
        type: 'employee.bank_account_corrected' as const,
        payroll_id: stub.payroll_id,
        data: {
          employee_id: stub.employee_id,
          paystub_id: stub.paystub_id,
          payroll_id: stub.payroll_id,
          code,
          trace_number: stub.payment.trace_number,
          bank_account: {
            account_type: account.account_type,
            routing_number: account.routing_number,
            account_number_last4: account.account_number_last4,
            status: account.status,
          },
          corrected_at: now,
        },
        created_at: now,
      });
      items.push(...s.events.items(events));
    }
    const committed = await s.transactions.write(items);
    if (committed === 'ok') {
      // Counted only when the account was corrected; a notification recorded but not applied is not a correction.
      if (applies) businessMetrics.count(METRIC_NAMES.correctionsApplied);
      await dispatchQuietly(s, events);
      return applies;
    }
    if (committed[0]) return 'already_applied';
    if (attempt >= ATTEMPTS) throw new Error(`Could not apply the correction of ${stub.payment.trace_number}`);
    await backoff(attempt);
  }
}
