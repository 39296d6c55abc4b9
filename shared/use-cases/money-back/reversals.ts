import { createHash } from 'node:crypto';
import { entryRecordsOf, type NachaOffsetInput, reissuedEntry, traceNumber } from '../../adapters/nacha.js';
import type { DisbursementFileRecord } from '../../data/disbursement-file-repository.js';
import type { NewEvent } from '../../data/event-repository.js';
import type { PaymentReturn, PaystubRecord } from '../../data/paystub-repository.js';
import type { PayrollRecord } from '../../data/payroll-repository.js';
import { offsetEntryCount } from '../../domain/disbursement.js';
import {
  IdempotencyKeyReusedError,
  NotFoundError,
  type ProblemDetail,
  ReversalRefusedError,
} from '../../domain/errors.js';
import { centsToNumber } from '../../domain/money.js';
import { REVERSAL_DESCRIPTION, type ReversalReason, reversalWindowEnds } from '../../domain/money-back.js';
import { RETURN_REASONS, type ReportOutcome } from '../../domain/returns.js';
import { dispatchQuietly } from '../events.js';
import { runFileText } from './file-store.js';
import { type PaidRun, settlementFor, writeNewFile } from './new-file.js';
import type { MoneyBackReturnServices, MoneyBackServices } from './services.js';

/**
 * Reversals (CONTRACT §12): the originator takes back payments made in error (a duplicate, a wrong amount, a wrong
 * account) within five banking days of their settlement, by a `REVERSAL` file holding, for each payment, a debit of
 * the same amount to the same account, and, in a balanced file, an offset credit to the funding account.
 */

export interface ReversalRequest {
  reason: ReversalReason;
  paystub_ids: string[];
}

export interface ReversalOutcome {
  file: DisbursementFileRecord;
  payments: PaystubRecord[];
  replayed: boolean;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Reverses payments of a completed run. Every payment named must be the run's, paid (`scheduled`), not reversed or
 * returned, and inside its window, or nothing is reversed. With an `Idempotency-Key`, the same request again answers
 * the same file (`replayed`); another request under the key is 422 `idempotency_key_reused`.
 */
export async function reversePayments(
  s: MoneyBackServices,
  orgId: string,
  payrollId: string,
  request: ReversalRequest,
  idempotencyKey?: string,
): Promise<ReversalOutcome> {
  const ids = [...new Set(request.paystub_ids)];
  const contentHash = sha256(JSON.stringify({ payrollId, reason: request.reason, ids: [...ids].sort() }));
  // Scoped to the organization, not the run: the same key sent for another run is another request under a key
  // already used (its content names the run), answered 422 rather than reversing a second run.
  const keyHash = idempotencyKey === undefined ? undefined : sha256(`reversal\u0000${idempotencyKey}`);
  const replay = async (): Promise<ReversalOutcome | undefined> => {
    if (keyHash === undefined) return undefined;
    const known = await s.payrolls.getIdempotency(orgId, keyHash, s.deps.now());
    if (!known) return undefined;
    if (known.content_hash !== contentHash || !known.file_id) throw new IdempotencyKeyReusedError();
    const file = await s.disbursementFiles.get(orgId, known.file_id);
    if (!file) throw new Error(`The file ${known.file_id} of an idempotent reversal is missing`);
    return { file, payments: await s.paystubs.getMany(ids), replayed: true };
  };
  const replayed = await replay();
  if (replayed) return replayed;

  const run = await s.payrolls.get(orgId, payrollId);
  if (!run) throw new NotFoundError();
  const stubs = await reversible(s, run, ids);
  // Never settling before the deposits it takes back (a debit before the credit would overdraw the account).
  const latest = stubs.map(settlementOf).sort().at(-1)!;
  const settlement = await settlementFor(s, orgId, latest);
  assertInWindow(stubs, settlement.release_by);
  const paid = run as PaidRun;
  const odfi = paid.originator.originating_dfi_identification;
  const records = entryRecordsOf(await runFileText(s, run));
  const originals = stubs.map((stub) => {
    const record = records.get(stub.payment.trace_number!);
    if (!record) throw new Error(`The payment ${stub.payment.trace_number} is not in the file of ${payrollId}`);
    return record;
  });
  const total = stubs.reduce((sum, stub) => sum + stub.net_pay, 0);
  const funding = run.funding && fundingAccountOf(records.get(run.funding.trace_number));
  const now = s.deps.now().toISOString();
  let events: NewEvent[] = [];
  const written = await writeNewFile(s, {
    type: 'reversal',
    run: paid,
    secCode: 'PPD',
    companyEntryDescription: REVERSAL_DESCRIPTION,
    reason: request.reason,
    settlement,
    traceCount: stubs.length + (funding ? offsetEntryCount(total) : 0),
    entries: (start) => ({
      records: originals.map((original, i) => reissuedEntry(original, odfi, start + i, true)),
      ...(funding && { offset: { ...funding, traceSequence: start + stubs.length } }),
      listed: [
        ...stubs.map((stub, i) => ({
          trace_number: traceNumber(odfi, start + i),
          kind: 'payment' as const,
          paystub_id: stub.paystub_id,
          amount: stub.net_pay,
          return: null,
        })),
        ...(funding
          ? [
              {
                trace_number: traceNumber(odfi, start + stubs.length),
                kind: 'funding' as const,
                paystub_id: null,
                amount: total,
                return: null,
              },
            ]
          : []),
      ],
    }),
    commit: (file) => {
      const reversals = stubs.map((_stub, i) => ({
        reason: request.reason,
        file_id: file.file_id,
        trace_number: file.entries[i]!.trace_number,
        effective_entry_date: file.effective_entry_date,
        scheduled_at: now,
      }));
      events = stubs.map((stub, i) => reversedEvent(s, stub, reversals[i]!, now));
      return [
        ...stubs.map((stub, i) => s.moneyBackWrites.reversalItem(stub, reversals[i]!)),
        s.moneyBackWrites.reversalTallyItem(orgId, payrollId, stubs.length, total),
        ...(keyHash === undefined
          ? []
          : [
              s.payrolls.idempotencyItem(
                orgId,
                keyHash,
                { content_hash: contentHash, payroll_id: payrollId, file_id: file.file_id },
                s.deps.now(),
              ),
            ]),
        ...s.events.items(events),
      ];
    },
  });
  if (!written.ok) {
    // The same key committed first: answer what it wrote. Otherwise a payment moved, or the run did: say which.
    if (keyHash !== undefined && written.refused[stubs.length + 1]) {
      const first = await replay();
      if (first) return first;
    }
    await reversible(s, (await s.payrolls.get(orgId, payrollId)) ?? run, ids);
    throw new Error(`The reversal of run ${payrollId} was refused, yet its payments are reversible`);
  }
  await dispatchQuietly(s, events);
  return { file: written.file, payments: await s.paystubs.getMany(ids), replayed: false };
}

/**
 * The paystubs named, each the run's, paid and still reversible today; otherwise the refusal, every payment that
 * causes it in `details`: an unknown paystub (422), one not paid (409), returned (409) or reversed (409).
 */
async function reversible(s: MoneyBackServices, run: PayrollRecord, ids: readonly string[]): Promise<PaystubRecord[]> {
  const found = new Map(
    (await s.paystubs.getMany(ids))
      .filter((p) => p.organization_id === run.organization_id && p.payroll_id === run.payroll_id)
      .map((p) => [p.paystub_id, p]),
  );
  const refuse = (code: ConstructorParameters<typeof ReversalRefusedError>[0], details: ProblemDetail[]) => {
    if (details.length > 0) throw new ReversalRefusedError(code, details);
  };
  refuse(
    'paystub_not_found',
    ids
      .filter((id) => !found.has(id))
      .map((id) => ({
        field: 'paystub_ids',
        code: 'paystub_not_found',
        paystub_id: id,
        message: `No paystub ${id} in this run`,
      })),
  );
  const stubs = ids.map((id) => found.get(id)!);
  const each = (
    code: string,
    test: (p: PaystubRecord) => boolean,
    message: (p: PaystubRecord) => string,
  ): ProblemDetail[] =>
    stubs.filter(test).map((p) => ({ field: 'paystub_ids', code, paystub_id: p.paystub_id, message: message(p) }));
  refuse(
    'payment_not_reversible',
    run.status !== 'completed'
      ? [
          {
            field: 'payroll_id',
            code: 'payment_not_reversible',
            message: `The run is ${run.status}: only a completed run's payments are reversed`,
          },
        ]
      : each(
          'payment_not_reversible',
          (p) =>
            p.payment.status === 'no_payment' || p.payment.status === 'cancelled' || p.payment.trace_number === null,
          (p) => `Paystub ${p.paystub_id} paid nothing (${p.payment.status})`,
        ),
  );
  refuse(
    'payment_returned',
    each(
      'payment_returned',
      (p) => p.payment.status === 'returned',
      (p) => `The payment of ${p.paystub_id} was returned by the bank: the money is back already`,
    ),
  );
  refuse(
    'already_reversed',
    each(
      'already_reversed',
      (p) => p.payment.status === 'reversal_scheduled' || p.payment.status === 'reversal_returned',
      (p) => `The payment of ${p.paystub_id} is reversed already (file ${p.payment.reversal?.file_id})`,
    ),
  );
  return [...stubs].sort((a, b) => a.payment.trace_number!.localeCompare(b.payment.trace_number!));
}

const settlementOf = (p: PaystubRecord) => p.payment.effective_entry_date ?? p.pay_date;

/**
 * NACHA: a reversal must reach the receiving bank within five banking days of the deposit's settlement. The file
 * written now reaches our bank on `releaseDay` (today before the cut-off, else the next banking day): refused when
 * that is past any payment's window.
 */
function assertInWindow(stubs: readonly PaystubRecord[], releaseDay: string): void {
  const late = stubs.filter((p) => releaseDay > reversalWindowEnds(settlementOf(p)));
  if (late.length > 0)
    throw new ReversalRefusedError(
      'reversal_window_closed',
      late.map((p) => ({
        field: 'paystub_ids',
        code: 'reversal_window_closed',
        paystub_id: p.paystub_id,
        message: `The payment of ${p.paystub_id} settled on ${settlementOf(p)}: a reversal had to reach the bank by ${reversalWindowEnds(settlementOf(p))}; one written now reaches it on ${releaseDay}`,
      })),
    );
}

/** The funding account of a balanced run, as its file's offset debit carries it: the reversal's credit goes there. */
function fundingAccountOf(offset: string | undefined): Omit<NachaOffsetInput, 'traceSequence'> | undefined {
  if (!offset) return undefined;
  return {
    routingNumber: offset.slice(3, 12),
    accountNumber: offset.slice(12, 29).trim(),
    accountType: offset.slice(1, 3) === '37' ? 'savings' : 'checking',
  };
}

function reversedEvent(
  s: MoneyBackServices,
  stub: PaystubRecord,
  reversal: NonNullable<PaystubRecord['payment']['reversal']>,
  now: string,
): NewEvent {
  return {
    event_id: s.deps.newId('evt'),
    organization_id: stub.organization_id,
    type: 'payment.reversed',
    payroll_id: stub.payroll_id,
    data: {
      paystub_id: stub.paystub_id,
      employee_id: stub.employee_id,
      payroll_id: stub.payroll_id,
      amount: centsToNumber(stub.net_pay),
      reason: reversal.reason,
      trace_number: stub.payment.trace_number,
      reversal_trace_number: reversal.trace_number,
      file_id: reversal.file_id,
      effective_entry_date: reversal.effective_entry_date,
    },
    created_at: now,
  };
}

/**
 * The bank returned a reversal's debit (the money did not come back): the payment becomes `reversal_returned` with
 * the code, the file records it, and `payment.reversal_returned` is emitted, once.
 */
export async function applyReversalReturn(
  s: MoneyBackReturnServices,
  file: DisbursementFileRecord,
  index: number,
  item: { trace_number: string; code: string; amount_cents?: number | undefined },
): Promise<{ outcome: ReportOutcome; paystub_id?: string }> {
  const entry = file.entries[index]!;
  if (item.amount_cents !== undefined && item.amount_cents !== entry.amount) return { outcome: 'amount_mismatch' };
  if (entry.return) return { outcome: 'already_applied', ...(entry.paystub_id && { paystub_id: entry.paystub_id }) };
  const now = s.deps.now().toISOString();
  const returned: PaymentReturn = { code: item.code, reason: RETURN_REASONS[item.code] ?? item.code, returned_at: now };
  if (entry.kind === 'funding') {
    // The offset credit of a reversal came back from the funding account: recorded on the file, for the operator.
    const committed = await s.transactions.writeThroughConflicts([
      s.disbursementFiles.entryReturnItem(file, index, returned),
    ]);
    return { outcome: committed === 'ok' ? 'applied' : 'already_applied' };
  }
  const stub = await s.paystubs.get(file.organization_id, entry.paystub_id!);
  if (!stub) return { outcome: 'unknown_trace' };
  const event: NewEvent = {
    event_id: s.deps.newId('evt'),
    organization_id: stub.organization_id,
    type: 'payment.reversal_returned',
    payroll_id: stub.payroll_id,
    data: {
      paystub_id: stub.paystub_id,
      employee_id: stub.employee_id,
      payroll_id: stub.payroll_id,
      amount: centsToNumber(entry.amount),
      code: item.code,
      reason: returned.reason,
      reversal_trace_number: entry.trace_number,
      file_id: file.file_id,
      returned_at: now,
    },
    created_at: now,
  };
  const committed = await s.transactions.writeThroughConflicts([
    s.moneyBackWrites.reversalReturnItem(stub, returned),
    s.disbursementFiles.entryReturnItem(file, index, returned),
    ...s.events.items([event]),
  ]);
  if (committed !== 'ok') return { outcome: 'already_applied', paystub_id: stub.paystub_id };
  await dispatchQuietly(s, [event]);
  return { outcome: 'applied', paystub_id: stub.paystub_id };
}
