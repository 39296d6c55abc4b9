import { buildNachaFile, type NachaOffsetInput } from '../../adapters/nacha.js';
import { backoff } from '../../data/batch.js';
import type { DisbursementFileRecord } from '../../data/disbursement-file-repository.js';
import type { TransactItems } from '../../data/item.js';
import type { PayrollRecord } from '../../data/payroll-repository.js';
import { BANK_TIME_ZONE, dateInTimeZone } from '../../domain/banking-calendar.js';
import { bankToday } from '../../domain/disbursement.js';
import { approvalCutoffTime } from '../../domain/settings.js';
import { type DisbursementFileType, nextSettlement } from '../../domain/money-back.js';
import { storeNewFile } from './file-store.js';
import type { MoneyBackServices } from './services.js';

/** A run whose file was written: it has the originator the new file must repeat. */
export type PaidRun = PayrollRecord & { originator: NonNullable<PayrollRecord['originator']> };

export interface NewFile {
  type: Exclude<DisbursementFileType, 'payroll' | 'prenote'>;
  run: PaidRun;
  secCode: 'PPD' | 'CCD';
  companyEntryDescription: string;
  /** Trace sequences the file needs (its entries and offsets). */
  traceCount: number;
  /** The file's entries for a block of traces starting at `traceStart`, and what the list records of them. */
  entries: (traceStart: number) => {
    records: string[];
    offset?: NachaOffsetInput;
    listed: DisbursementFileRecord['entries'];
  };
  reason?: string;
  /** When the file reaches the bank and settles (`settlementFor`). */
  settlement: { effective_entry_date: string; release_by: string };
  /**
   * The writes that make the file count, in its transaction: conditioned so that a second request for the same
   * money (a concurrent reversal of the same payment, a second re-debit) fails instead of writing a second file.
   */
  commit: (file: DisbursementFileRecord) => TransactItems;
}

/**
 * When a file written now for the run reaches the bank and settles: today before the organization's cut-off (its
 * `approval_cutoff_time`, the time files must reach the bank by), else the next banking day; never settling before
 * `notBefore`.
 */
export async function settlementFor(
  s: Pick<MoneyBackServices, 'organizations' | 'deps'>,
  orgId: string,
  notBefore?: string,
): Promise<{ effective_entry_date: string; release_by: string }> {
  const settings = await s.organizations.getSettings(orgId);
  return nextSettlement(dateInTimeZone(s.deps.now(), BANK_TIME_ZONE), approvalCutoffTime(settings ?? {}), notBefore);
}

/** The reservation's counters and block, then the file's item: the caller's writes follow. */
const RESERVATION_ITEMS = 3;
const ATTEMPTS = 6;

/**
 * Writes a new file for a run: trace numbers and a file ID modifier from the organization's sequences (never one any
 * file used), the sealed object, then one transaction that reserves the numbers, lists the file and makes the
 * caller's changes. Of two requests for the same money exactly one commits: the other's transaction is cancelled by
 * the caller's conditions and answered by them (`refused`, with the caller's items that failed), and its object,
 * never listed, is never served or sent. A transaction that lost the race for a counter is tried again with fresh
 * numbers.
 */
export async function writeNewFile(
  s: MoneyBackServices,
  plan: NewFile,
): Promise<{ ok: true; file: DisbursementFileRecord } | { ok: false; refused: boolean[] }> {
  const { run } = plan;
  const { originator } = run;
  const orgId = run.organization_id;
  for (let attempt = 1; ; attempt++) {
    const now = s.deps.now();
    const today = bankToday(now);
    const fileId = s.deps.newId('file');
    const reservation = await s.sequences.reserve(orgId, {
      odfi: originator.originating_dfi_identification,
      destination: originator.immediate_destination,
      creationDate: today,
      traceCount: plan.traceCount,
      now,
      owner: { fileId },
      entries: plan.traceCount,
    });
    const dates = plan.settlement;
    const { records, offset, listed } = plan.entries(reservation.traceStart);
    const built = buildNachaFile({
      originator,
      fileCreation: now,
      fileIdModifier: reservation.fileIdModifier,
      effectiveEntryDate: dates.effective_entry_date,
      companyEntryDescription: plan.companyEntryDescription,
      companyDescriptiveDate: run.pay_date,
      secCode: plan.secCode,
      entries: records,
      ...(offset && { offset }),
    });
    const stored = await storeNewFile(s, run, fileId, built.content);
    const file: DisbursementFileRecord = {
      file_id: fileId,
      organization_id: orgId,
      type: plan.type,
      payroll_id: run.payroll_id,
      status: 'ready',
      created_at: now.toISOString(),
      ...dates,
      file_id_modifier: reservation.fileIdModifier,
      entry_count: built.control.entryAddendaCount,
      entry_hash: built.control.entryHash,
      total_credit: built.control.totalCreditCents,
      total_debit: built.control.totalDebitCents,
      batch_count: built.control.batchCount,
      block_count: built.control.blockCount,
      transmitted_at: null,
      remote_name: null,
      sent_sha256: null,
      acknowledged_at: null,
      late_at: null,
      ...stored,
      reason: plan.reason ?? null,
      entries: listed,
    };
    const committed = await s.transactions.write([
      ...reservation.items,
      s.disbursementFiles.putItem(file),
      ...plan.commit(file),
    ]);
    if (committed === 'ok') return { ok: true, file };
    const refused = committed.slice(RESERVATION_ITEMS + 1);
    if (refused.some(Boolean)) return { ok: false, refused };
    // A counter moved (another file of the organization took the numbers), or the transaction met another.
    if (attempt >= ATTEMPTS) throw new Error(`Could not write a ${plan.type} file for run ${run.payroll_id}`);
    await backoff(attempt);
  }
}
