import { entryDetailRecord, type NachaEntryInput, traceNumber } from '../../adapters/nacha.js';
import { METRIC_NAMES } from '../../adapters/metric-names.js';
import { objectKeys } from '../../adapters/object-store.js';
import { businessMetrics } from '../../adapters/observability.js';
import type { EmployeeRecord } from '../../data/employee-repository.js';
import type { PayrollRecord } from '../../data/payroll-repository.js';
import { paystubIdOf, type PaystubRecord } from '../../data/paystub-repository.js';
import { effectiveEntryDate } from '../../domain/banking-calendar.js';
import { fileNumbering } from '../../domain/disbursement.js';
import { endedWithoutPaying, mayTake } from '../../domain/payroll-lifecycle.js';
import { deductionsTotal, netPay, type PayrollEntry } from '../../domain/payroll.js';
import { type ChunkFile, type EngineServices, type EntriesFile, type PendingEntry, step } from './services.js';

/** A run the chunk step may work on: planned and still able to finish. */
type PlannedRecord = PayrollRecord & {
  chunk_count: number;
  originator: NonNullable<PayrollRecord['originator']>;
  processing_started_at: string;
};

/**
 * The chunk step: checks the chunk's accounts, writes its paystubs and its pending NACHA entries, and marks it done
 * (the last one done sends finalize). Works only while the run may still finish; a chunk delivered to a run that
 * ended without paying voids what it wrote.
 */
export async function processChunk(s: EngineServices, orgId: string, payrollId: string, chunk: number): Promise<void> {
  const record = await s.payrolls.get(orgId, payrollId);
  if (!record) return;
  if (endedWithoutPaying(record.status) && record.chunk_count !== null) {
    // Delivered again after the run ended, perhaps after a crash between writing its paystubs and marking it done:
    // whatever this chunk wrote is voided.
    await voidChunk(s, record, chunk);
    return;
  }
  if (!isPlanned(record)) return;
  if (!record.chunks_done.has(chunk)) {
    await writeChunk(s, record, chunk);
    return;
  }
  // A re-delivered chunk whose work is done: make sure the run still gets finalized if that message was lost.
  if (record.chunks_done.size === record.chunk_count) await s.queue.send(step.finalize(orgId, payrollId));
}

function isPlanned(record: PayrollRecord): record is PlannedRecord {
  return (
    mayTake(record.status, 'finish') &&
    record.chunk_count !== null &&
    !!record.originator &&
    !!record.processing_started_at
  );
}

async function voidChunk(s: EngineServices, record: PayrollRecord, chunk: number): Promise<void> {
  const file = await s.objects.getJson<ChunkFile>(objectKeys.chunk(record.organization_id, record.payroll_id, chunk));
  if (file) await s.paystubs.voidAll(file.entries.map((e, i) => paystubIdOf(record, file.offset + i, e.employee_id)));
}

interface ChunkWork {
  paystubs: PaystubRecord[];
  pending: PendingEntry[];
}

async function writeChunk(s: EngineServices, record: PlannedRecord, chunk: number): Promise<void> {
  const { organization_id: orgId, payroll_id: payrollId } = record;
  const file = await s.objects.getJson<ChunkFile>(objectKeys.chunk(orgId, payrollId, chunk));
  if (!file) throw new Error(`Chunk ${chunk} of payroll ${payrollId} is missing`);
  const employees = await s.employees.getMany(
    orgId,
    file.entries.map((e) => e.employee_id),
  );
  const work: ChunkWork = { paystubs: [], pending: [] };
  for (const [i, entry] of file.entries.entries()) await addEntry(s, record, work, file.offset + i, entry, employees);
  await Promise.all([
    s.paystubs.putAll(work.paystubs),
    s.objects.putJson(objectKeys.chunkEntries(orgId, payrollId, chunk), {
      entries: work.pending,
    } satisfies EntriesFile),
  ]);
  const updated = await s.payrolls.markChunkDone(orgId, payrollId, chunk, s.deps.now().toISOString());
  if (!updated) {
    // No longer processing, or a twin delivery of this message finished the chunk first (its paystubs are the
    // same items, written twice). Cancelled (or failed) while this chunk was written: the cancel voided what
    // existed then, and this chunk voids what it added since, so no paystub of such a run stays `issued`.
    // Completed (this was a late duplicate of a chunk already done): its paystubs are the run's, and stay as they are.
    const now = await s.payrolls.get(orgId, payrollId);
    if (now && endedWithoutPaying(now.status)) await s.paystubs.voidAll(work.paystubs.map((p) => p.paystub_id));
    return;
  }
  // Counted by the one call that marked the chunk done: a chunk delivered again counts nothing.
  businessMetrics.count(METRIC_NAMES.paystubsWritten, work.paystubs.length);
  if (updated.chunks_done.size === updated.chunk_count) await s.queue.send(step.finalize(orgId, payrollId));
}

/** One entry of the chunk: its pending NACHA entry (when it pays) and its paystub. */
async function addEntry(
  s: EngineServices,
  record: PlannedRecord,
  work: ChunkWork,
  index: number,
  entry: PayrollEntry,
  employees: ReadonlyMap<string, EmployeeRecord>,
): Promise<void> {
  const employee = employees.get(entry.employee_id);
  const bank = employee?.bank_account;
  // Verified at start; an employee removed since is still paid for work already done in the period.
  if (!employee || !bank)
    throw new Error(`Employee ${entry.employee_id} or their bank account disappeared during processing`);
  const odfi = record.originator.originating_dfi_identification;
  const net = netPay(entry);
  const sequence = fileNumbering(record).traceStart + index;
  let trace: string | null = null;
  if (net > 0) {
    const accountNumber = await s.encryptor.decrypt(bank.account_number_ciphertext, record.organization_id);
    trace = traceNumber(odfi, sequence);
    const fields: Omit<NachaEntryInput, 'accountNumber'> = {
      routingNumber: bank.routing_number,
      accountType: bank.account_type,
      amountCents: net,
      individualId: entry.employee_id.slice(-15),
      individualName: `${employee.first_name} ${employee.last_name}`,
      traceSequence: sequence,
    };
    // Built and dropped: a field no file may carry fails the run at this step, before any file is assembled.
    entryDetailRecord(odfi, { ...fields, accountNumber });
    work.pending.push({ ...fields, account_number_ciphertext: bank.account_number_ciphertext });
  }
  work.paystubs.push(paystubOf(record, index, entry, employee, bank, net, trace));
}

function paystubOf(
  record: PlannedRecord,
  index: number,
  entry: PayrollEntry,
  employee: EmployeeRecord,
  bank: NonNullable<EmployeeRecord['bank_account']>,
  net: number,
  trace: string | null,
): PaystubRecord {
  const issued = record.processing_started_at;
  return {
    paystub_id: paystubIdOf(record, index, entry.employee_id),
    organization_id: record.organization_id,
    employee_id: entry.employee_id,
    payroll_id: record.payroll_id,
    employee_name: `${employee.first_name} ${employee.last_name}`,
    period_start: record.pay_period_start,
    period_end: record.pay_period_end,
    pay_date: record.pay_date,
    issued_date: issued.slice(0, 10),
    hours_worked_hundredths: entry.hours_worked_hundredths,
    gross_pay: entry.gross_pay,
    bonuses: entry.bonuses,
    deductions: entry.deductions,
    deductions_total: deductionsTotal(entry),
    net_pay: net,
    notes: entry.notes,
    payment: {
      method: 'direct_deposit',
      account_type: bank.account_type,
      account_number_last4: bank.account_number_last4,
      routing_number: bank.routing_number,
      account_ref: bank.account_ref,
      trace_number: trace,
      status: net > 0 ? 'scheduled' : 'no_payment',
      effective_entry_date: net > 0 ? effectiveEntryDate(record.pay_date) : null,
    },
    status: 'issued',
    created_at: issued,
  };
}
