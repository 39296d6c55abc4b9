import { fileContext } from '../../adapters/file-sealer.js';
import { deterministicTimedId } from '../../adapters/ids.js';
import { buildNachaFile, entryDetailRecord, MAX_ENTRY_CENTS, traceNumber } from '../../adapters/nacha.js';
import { objectKeys } from '../../adapters/object-store.js';
import { inParallel } from '../../data/batch.js';
import type { DisbursementFileRecord } from '../../data/disbursement-file-repository.js';
import type { FundingRecord, PayrollRecord } from '../../data/payroll-repository.js';
import { effectiveEntryDate } from '../../domain/banking-calendar.js';
import { disbursementDates, fileNumbering } from '../../domain/disbursement.js';
import { centsToNumber } from '../../domain/money.js';
import { endedWithoutPaying, mayTake, reachedBy } from '../../domain/payroll-lifecycle.js';
import { fileRetentionDays } from '../../domain/settings.js';
import { payrollEvent } from '../events.js';
import { transitionWithEvents } from '../payroll-transitions.js';
import { failRun, voidWrittenPaystubs } from './end-run.js';
import { bankOf, type EngineServices, type EntriesFile, loadSubmission, type PendingEntry } from './services.js';

/** Account numbers decrypted at once while a file is assembled (the data keys they need are unwrapped by KMS). */
const DECRYPT_PARALLEL = 32;
const DAY_MS = 86_400_000;

/** A run the finalize step may finish: planned, every chunk done, still able to finish. */
type ReadyRecord = PayrollRecord & {
  chunk_count: number;
  originator: NonNullable<PayrollRecord['originator']>;
  processing_started_at: string;
};

/**
 * The finalize step: once every chunk is done, the bank may fail the run; otherwise the NACHA file is assembled and
 * sealed, the run finishes, and the returns its bank sends back are applied. A finalize delivered again finishes
 * what the last one left: the returns of a finished run, the voiding of a run that ended without paying.
 */
export async function finalizeRun(s: EngineServices, orgId: string, payrollId: string): Promise<void> {
  const record = await s.payrolls.get(orgId, payrollId);
  if (!record) return;
  // A finalize delivered again after completion: nothing left to do (what the bank sends back comes by the bank link).
  if (reachedBy(record.status, 'finish')) return;
  // After the run ended without completing (a failure whose voiding was cut short, a cancel): finish voiding.
  if (endedWithoutPaying(record.status)) {
    await voidWrittenPaystubs(s, record);
    return;
  }
  if (!isReady(record)) return; // the last chunk will send finalize again
  // The bank's processing failure: after the paystubs exist, before the file is released.
  const failure = await bankOf(s, record).failsProcessing(() => loadSubmission(s, record));
  if (failure !== undefined) {
    await failRun(s, orgId, payrollId, failure);
    return;
  }
  const disbursement = await writeFile(s, record);
  if (disbursement === undefined) return; // cancelled or failed meanwhile: nothing to release
  await finishRun(s, record, disbursement);
}

function isReady(record: PayrollRecord): record is ReadyRecord {
  return (
    mayTake(record.status, 'finish') &&
    record.chunk_count !== null &&
    !!record.originator &&
    !!record.processing_started_at &&
    record.chunks_done.size >= record.chunk_count
  );
}

/**
 * Assembles the run's NACHA file from its chunks' pending entries and stores it sealed: the disbursement's control
 * totals, null when no entry pays, undefined when the run left `processing` before its file key was reserved.
 */
async function writeFile(s: EngineServices, record: ReadyRecord): Promise<PayrollRecord['disbursement'] | undefined> {
  const { organization_id: orgId, payroll_id: payrollId } = record;
  const parts = await Promise.all(
    Array.from({ length: record.chunk_count }, async (_, i): Promise<(PendingEntry | string)[]> => {
      const file = await s.objects.getJson<EntriesFile>(objectKeys.chunkEntries(orgId, payrollId, i));
      if (!file) throw new Error(`Entries of chunk ${i} of payroll ${payrollId} are missing`);
      return file.entries;
    }),
  );
  const entries = await entryRecords(s, orgId, record.originator.originating_dfi_identification, parts.flat());
  if (entries.length === 0) return null;
  const funding = record.funding_account;
  const numbering = fileNumbering(record);
  const file = buildNachaFile({
    originator: record.originator,
    fileCreation: new Date(record.processing_started_at),
    fileIdModifier: numbering.fileIdModifier,
    effectiveEntryDate: effectiveEntryDate(record.pay_date),
    companyEntryDescription: 'PAYROLL',
    companyDescriptiveDate: record.pay_date,
    entries,
    ...(funding && {
      offset: {
        routingNumber: funding.routing_number,
        accountNumber: await s.encryptor.decrypt(funding.account_number_ciphertext, orgId),
        accountType: funding.account_type,
        // The block's last sequence: after every entry of the run, whichever of them paid.
        traceSequence: numbering.traceStart + record.employee_count,
      },
    }),
  });
  if (!(await storeSealedFile(s, record, file.content))) return undefined;
  const created = new Date(record.processing_started_at);
  return {
    entry_count: file.control.entryAddendaCount,
    entry_hash: file.control.entryHash,
    total_credit: file.control.totalCreditCents,
    total_debit: file.control.totalDebitCents,
    batch_count: file.control.batchCount,
    block_count: file.control.blockCount,
    created_at: record.processing_started_at,
    // Derived from the run: a finalize delivered twice lists the same file once.
    file_id: deterministicTimedId('file', created, orgId, payrollId),
  };
}

/** The run's file as the list of files shows it (the sealed object and its key are the run's). */
function payrollFileItem(record: ReadyRecord, d: NonNullable<PayrollRecord['disbursement']>): DisbursementFileRecord {
  return {
    file_id: d.file_id!,
    organization_id: record.organization_id,
    type: 'payroll',
    payroll_id: record.payroll_id,
    status: 'ready',
    created_at: d.created_at,
    ...disbursementDates(record.pay_date),
    file_id_modifier: fileNumbering(record).fileIdModifier,
    entry_count: d.entry_count,
    entry_hash: d.entry_hash,
    total_credit: d.total_credit,
    total_debit: d.total_debit,
    batch_count: d.batch_count,
    block_count: d.block_count,
    transmitted_at: null,
    remote_name: null,
    sent_sha256: null,
    acknowledged_at: null,
    late_at: null,
    object_key: objectKeys.disbursement(record.organization_id, record.payroll_id),
    file_key: null,
    reason: null,
    entries: [],
  };
}

/**
 * A balanced run's debit of the funding account: the first offset entry's trace (after every credit's) and amount
 * (the whole credit total, unless it passes one entry's amount field).
 */
function fundingOf(record: ReadyRecord, d: NonNullable<PayrollRecord['disbursement']>): FundingRecord | null {
  if (d.total_debit === 0) return null;
  const trace = traceNumber(
    record.originator.originating_dfi_identification,
    fileNumbering(record).traceStart + record.employee_count,
  );
  const first = Math.min(MAX_ENTRY_CENTS, d.total_debit);
  return {
    status: 'scheduled',
    amount: d.total_debit,
    trace_number: trace,
    effective_entry_date: effectiveEntryDate(record.pay_date),
    outstanding_trace: trace,
    outstanding_amount: first,
    return: null,
    redebits: [],
    resolution: null,
    returned_traces: [],
  };
}

/** The run finishes: payroll.processed with the file's summary, then completed, and one batched paystub.generated. */
async function finishRun(
  s: EngineServices,
  record: ReadyRecord,
  disbursement: PayrollRecord['disbursement'],
): Promise<void> {
  const now = s.deps.now().toISOString();
  const processed = payrollEvent(s.deps, { ...record, disbursement }, 'payroll.processed', {
    disbursement: disbursementSummary(disbursement),
  });
  // One batched paystub.generated per run (not one per paystub): a 25,000-employee run is one event, with a link.
  await transitionWithEvents(s, record, 'finish', {
    details: {
      'payroll.processed': { built: processed },
      'paystub.generated': {
        data: {
          payroll_id: record.payroll_id,
          paystub_count: record.employee_count,
          pay_date: record.pay_date,
          paystubs_url: `/v1/paystubs?payroll_id=${record.payroll_id}`,
        },
      },
    },
    set: { disbursement, funding: disbursement && fundingOf(record, disbursement) },
    // The file is listed by the write that finishes the run: a run that completes has its file listed, and no other.
    alsoWrite: disbursement ? [s.disbursementFiles.putItem(payrollFileItem(record, disbursement))] : [],
    at: now,
  });
}

/**
 * Writes the run's NACHA file sealed under the run's own key (reserved on the run's item first, so finalizers that
 * race seal with the same key), in production locked against deletion for the organization's retention period. False
 * when the run left `processing` before its key was reserved: no readable file is ever written for it.
 */
async function storeSealedFile(s: EngineServices, record: PayrollRecord, content: string): Promise<boolean> {
  const { organization_id: orgId, payroll_id: payrollId } = record;
  const fresh = await s.files.newKey();
  const wrapped = await s.payrolls.reserveFileKey(orgId, payrollId, fresh.wrapped);
  if (wrapped === undefined) return false;
  const key = wrapped === fresh.wrapped ? fresh.key : await s.files.unwrap(wrapped);
  // Production files only: a sandbox stage must stay removable, and its files never reach a bank.
  const retainUntil =
    record.environment === 'production'
      ? new Date(s.deps.now().getTime() + fileRetentionDays((await s.organizations.getSettings(orgId)) ?? {}) * DAY_MS)
      : undefined;
  await s.objects.putText(
    objectKeys.disbursement(orgId, payrollId),
    s.files.seal(content, key, fileContext(orgId, payrollId)),
    'text/plain',
    { retainUntil },
  );
  return true;
}

/**
 * The entry records of the file, in the order given: each pending entry's account number decrypted, in memory only,
 * and its record built as the chunk built it (byte for byte: the record is a function of these fields alone).
 */
async function entryRecords(
  s: EngineServices,
  orgId: string,
  odfi: string,
  entries: readonly (PendingEntry | string)[],
): Promise<string[]> {
  const records = new Array<string>(entries.length);
  await inParallel(
    entries.map((entry, i) => [entry, i] as const),
    DECRYPT_PARALLEL,
    async ([entry, i]) => {
      if (typeof entry === 'string') {
        records[i] = entry;
        return;
      }
      const { account_number_ciphertext, ...fields } = entry;
      const accountNumber = await s.encryptor.decrypt(account_number_ciphertext, orgId);
      records[i] = entryDetailRecord(odfi, { ...fields, accountNumber });
    },
  );
  return records;
}

function disbursementSummary(d: PayrollRecord['disbursement']) {
  return (
    d && {
      entry_count: d.entry_count,
      entry_hash: d.entry_hash,
      total_credit: centsToNumber(d.total_credit),
      total_debit: centsToNumber(d.total_debit),
      batch_count: d.batch_count,
    }
  );
}
