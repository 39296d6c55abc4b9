import { entryRecordsOf, reissuedEntry, traceNumber } from '../../adapters/nacha.js';
import type { DisbursementFileRecord } from '../../data/disbursement-file-repository.js';
import type { PayrollRecord } from '../../data/payroll-repository.js';
import { bankToday } from '../../domain/disbursement.js';
import {
  FundingNotReturnedError,
  FundingHoldError,
  fundingHoldDetail,
  NotFoundError,
  RedebitNotAllowedError,
} from '../../domain/errors.js';
import { fundingMay, REDEBIT_DESCRIPTION, REDEBIT_REFUSAL_MESSAGE, redebitRefusal } from '../../domain/money-back.js';
import type { ReportOutcome } from '../../domain/returns.js';
import { RETURN_REASONS } from '../../domain/returns.js';
import { dispatchQuietly, payrollEvent } from '../events.js';
import { fundingView } from '../payroll-view.js';
import { runFileText } from './file-store.js';
import { type PaidRun, settlementFor, writeNewFile } from './new-file.js';
import type { MoneyBackReturnServices, MoneyBackServices } from './services.js';

/**
 * The funding debit of a balanced run (CONTRACT §12): its return by the bank puts the organization on hold; a
 * re-debit (R01 and R09 only, twice at most, within 180 days) or a payment by other means lifts the hold.
 */

/** Refuses new runs and approvals while a funding debit of the organization is returned and unresolved. */
export async function assertNoFundingHold(s: Pick<MoneyBackServices, 'organizations'>, orgId: string): Promise<void> {
  const [hold] = await s.organizations.fundingHolds(orgId);
  if (hold) throw new FundingHoldError([fundingHoldDetail(hold)]);
}

/**
 * Applies the bank's return of one of the run's funding debits (`redebit`: the index of the re-debit it is, if it is
 * one): the debit is `returned`, the organization on hold, `payroll.funding_returned` recorded, all in one
 * transaction conditioned on that debit being the one outstanding. The employees' credits are not touched.
 */
export async function applyFundingReturn(
  s: MoneyBackReturnServices,
  run: PayrollRecord,
  item: { trace_number: string; code: string; amount_cents?: number | undefined },
  redebit?: number,
): Promise<ReportOutcome> {
  const funding = run.funding;
  // A run cancelled or failed since never had its file released: nothing of it can come back.
  if (!funding || run.status !== 'completed') return 'unknown_trace';
  if (funding.returned_traces.includes(item.trace_number)) return 'already_applied';
  if (funding.outstanding_trace !== item.trace_number) return 'unknown_trace';
  if (item.amount_cents !== undefined && item.amount_cents !== funding.outstanding_amount) return 'amount_mismatch';
  const now = s.deps.now().toISOString();
  const returned = { code: item.code, reason: RETURN_REASONS[item.code] ?? item.code, returned_at: now };
  const after: PayrollRecord = {
    ...run,
    funding: { ...funding, status: 'returned', return: returned },
  };
  const event = payrollEvent(s.deps, after, 'payroll.funding_returned', {
    funding: fundingView(after.funding),
    trace_number: item.trace_number,
  });
  const committed = await s.transactions.writeThroughConflicts([
    s.moneyBackWrites.fundingReturnItem(run, item.trace_number, returned, redebit),
    s.moneyBackWrites.fundingHoldItem(run.organization_id, {
      payroll_id: run.payroll_id,
      code: item.code,
      since: now,
    }),
    ...s.events.items([event]),
  ]);
  if (committed !== 'ok') {
    // Another report returned it first, or a re-debit replaced it in between.
    const again = await s.payrolls.get(run.organization_id, run.payroll_id);
    return again?.funding?.returned_traces.includes(item.trace_number) ? 'already_applied' : 'unknown_trace';
  }
  await dispatchQuietly(s, [event]);
  return 'applied';
}

/**
 * Re-initiates the run's returned funding debit: a `redebit` file of one CCD batch with one debit, the original
 * offset entry's account and amount under a new trace number, Company Entry Description `RETRY PYMT`. Lifts the hold.
 */
export async function redebitFunding(s: MoneyBackServices, orgId: string, payrollId: string): Promise<PayrollRecord> {
  const run = await s.payrolls.get(orgId, payrollId);
  if (!run) throw new NotFoundError();
  const funding = run.funding;
  if (!funding || !run.originator)
    throw new RedebitNotAllowedError('no_funding_debit', 'The run has no funding debit: its file carried credits only');
  if (run.status !== 'completed')
    throw new RedebitNotAllowedError('not_returned', `The run is ${run.status}: its file was withdrawn`);
  const refusal = redebitRefusal(
    {
      status: funding.status,
      effective_entry_date: funding.effective_entry_date,
      return_code: funding.return?.code ?? null,
      redebits: funding.redebits.length,
    },
    bankToday(s.deps.now()),
  );
  if (refusal) throw new RedebitNotAllowedError(refusal, REDEBIT_REFUSAL_MESSAGE[refusal]);
  const original = entryRecordsOf(await runFileText(s, run)).get(funding.trace_number);
  if (!original) throw new Error(`The funding debit ${funding.trace_number} is not in the file of ${payrollId}`);
  const paid = run as PaidRun;
  const odfi = paid.originator.originating_dfi_identification;
  // The re-initiated entry is the original offset again: its amount is the record's (cents, positions 30-39).
  const amount = Number(original.slice(29, 39));
  const written = await writeNewFile(s, {
    type: 'redebit',
    settlement: await settlementFor(s, orgId),
    run: paid,
    secCode: 'CCD',
    companyEntryDescription: REDEBIT_DESCRIPTION,
    traceCount: 1,
    entries: (start) => ({
      records: [reissuedEntry(original, odfi, start, false)],
      listed: [{ trace_number: traceNumber(odfi, start), kind: 'funding', paystub_id: null, amount, return: null }],
    }),
    commit: (file: DisbursementFileRecord) => [
      s.moneyBackWrites.fundingRedebitItem(run, funding.redebits.length, {
        file_id: file.file_id,
        trace_number: file.entries[0]!.trace_number,
        amount,
        effective_entry_date: file.effective_entry_date,
        created_at: file.created_at,
        return: null,
      }),
      s.moneyBackWrites.fundingReleaseItem(orgId, payrollId),
    ],
  });
  const after = (await s.payrolls.get(orgId, payrollId))!;
  if (!written.ok) {
    // A re-debit or a resolution came first.
    const status = after.funding?.status ?? 'scheduled';
    throw new RedebitNotAllowedError('not_returned', `${REDEBIT_REFUSAL_MESSAGE.not_returned}: it is ${status}`);
  }
  return after;
}

/** Records that the organization paid the returned debit by other means (a wire): lifts the hold. */
export async function resolveFunding(
  s: Pick<MoneyBackServices, 'payrolls' | 'moneyBackWrites' | 'transactions' | 'deps'>,
  orgId: string,
  payrollId: string,
  how: { method: 'wire' | 'other'; reference: string },
): Promise<PayrollRecord> {
  const run = await s.payrolls.get(orgId, payrollId);
  if (!run) throw new NotFoundError();
  const status = run.funding?.status;
  if (!status || !fundingMay(status, 'resolve')) throw new FundingNotReturnedError(status ?? 'not a balanced run');
  const committed = await s.transactions.writeThroughConflicts([
    s.moneyBackWrites.fundingResolveItem(run, { ...how, resolved_at: s.deps.now().toISOString() }),
    s.moneyBackWrites.fundingReleaseItem(orgId, payrollId),
  ]);
  const after = (await s.payrolls.get(orgId, payrollId))!;
  if (committed !== 'ok') throw new FundingNotReturnedError(after.funding?.status ?? 'unknown');
  return after;
}
