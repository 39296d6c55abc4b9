import type { ReportOutcome, ReturnItem } from '../../domain/returns.js';
import type { ReportLookups } from '../disbursement-returns.js';
import { applyFundingReturn } from './funding.js';
import { applyReversalReturn } from './reversals.js';
import type { MoneyBackReturnServices } from './services.js';

/** What a returned entry that is not an employee's deposit was: a run's funding debit, or a reversal's entry. */
export type MoneyBackEntry = 'funding_debit' | 'reversal_debit' | 'reversal_offset';

export interface MoneyBackOutcome {
  outcome: ReportOutcome;
  entry: MoneyBackEntry;
  payroll_id: string;
  paystub_id?: string;
}

/**
 * A bank's return of an entry that moved money back or in from the employer (CONTRACT §12), found by its trace
 * number: a run's offset debit, a re-debit, a reversal's debit or offset credit. Undefined when the trace is none of
 * these (an employee's deposit, or an entry the service never wrote).
 */
export async function applyMoneyBackReturn(
  s: MoneyBackReturnServices,
  orgId: string,
  item: ReturnItem,
  lookups: ReportLookups,
): Promise<MoneyBackOutcome | undefined> {
  const owner = await lookups.owner(item.trace_number);
  if (!owner) return undefined;
  const fileOf = owner.kind === 'file' ? await s.disbursementFiles.get(orgId, owner.fileId) : undefined;
  const payrollId = owner.kind === 'payroll' ? owner.payrollId : fileOf?.payroll_id;
  // An employee's deposit is the deposits' intake's; a block whose file or run is gone matches nothing.
  if ((owner.kind === 'payroll' && owner.index < owner.entries) || !payrollId) return undefined;
  const run = await lookups.run(payrollId);
  // A file's batch names the originator whose entries it returns: another company's batch is not about this run.
  if (
    !run ||
    (item.company_identification !== undefined &&
      item.company_identification !== run.originator?.company_identification)
  )
    return undefined;
  if (owner.kind === 'payroll')
    return { entry: 'funding_debit', payroll_id: payrollId, outcome: await applyFundingReturn(s, run, item) };
  const file = fileOf!;
  const index = file.entries.findIndex((e) => e.trace_number === item.trace_number);
  if (index < 0) return undefined;
  if (file.type === 'redebit') {
    const redebit = run.funding?.redebits.findIndex((r) => r.file_id === file.file_id) ?? -1;
    if (redebit < 0) return undefined;
    return { entry: 'funding_debit', payroll_id: payrollId, outcome: await applyFundingReturn(s, run, item, redebit) };
  }
  if (file.type !== 'reversal') return undefined;
  const applied = await applyReversalReturn(s, file, index, item);
  return {
    entry: file.entries[index]!.kind === 'funding' ? 'reversal_offset' : 'reversal_debit',
    payroll_id: payrollId,
    ...applied,
  };
}
