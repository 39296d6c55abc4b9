import { type FileSealer, fileContext } from '../adapters/file-sealer.js';
import { fileRetentionDays } from '../domain/settings.js';
import type { FieldEncryptor } from '../adapters/envelope-encryption.js';
import {
  buildNachaFile,
  entryDetailRecord,
  type NachaEntryInput,
  NachaFormatError,
  traceNumber,
} from '../adapters/nacha.js';
import { METRIC_NAMES } from '../adapters/metric-names.js';
import { writeReturnFile } from '../adapters/nacha-returns.js';
import { objectKeys, type ObjectStore } from '../adapters/object-store.js';
import { businessMetrics } from '../adapters/observability.js';
import type { Queue } from '../adapters/queue.js';
import { inParallel } from '../data/batch.js';
import {
  type DisbursementSequenceRepository,
  TraceSequenceExhaustedError,
} from '../data/disbursement-sequence-repository.js';
import type { EmployeeRepository } from '../data/employee-repository.js';
import type { OrganizationRepository } from '../data/organization-repository.js';
import { entryPaystubId, paystubIdOf, type PaystubRecord, type PaystubRepository } from '../data/paystub-repository.js';
import type { TransactItems, Transactions } from '../data/item.js';
import type { PayrollRecord, PayrollRepository } from '../data/payroll-repository.js';
import { effectiveEntryDate } from '../domain/banking-calendar.js';
import { bankToday, fileNumbering, offsetEntryCount } from '../domain/disbursement.js';
import { complianceFindings, type EmployeeFacts, SIMULATE_FAIL_NOTE } from '../domain/compliance.js';
import { centsToNumber, parseMoney } from '../domain/money.js';
import { deductionsTotal, netPay, type PayrollEntry } from '../domain/payroll.js';
import type { OrganizationSettings } from '../domain/settings.js';
import { MAX_REPORT_ITEMS } from '../schemas/disbursement-returns.js';
import { applyBankReport, readBankReport } from './disbursement-returns.js';
import { dispatchQuietly, payrollEvent, type EventServices } from './events.js';
import { transitionWithEvents } from './payroll-transitions.js';
import type { StoredSubmission } from './submit-payroll.js';
import { payrollEmployeeIds } from './payroll-employee-ids.js';

/**
 * The processing pipeline, driven by three kinds of queue message:
 *
 *   start     verify again, run the compliance checks, split the run into chunks, enqueue one message per chunk
 *   chunk     check the chunk's accounts, write its paystubs and its pending NACHA entries, mark the chunk done
 *   finalize  once every chunk is done, assemble the NACHA file, and complete (or fail) the run
 *
 * No full account number is stored anywhere but the run's NACHA file: a chunk's work file keeps each entry's
 * account as the employee's ciphertext, decrypted again only to assemble the file, and a run's work files are
 * deleted once it ends (completed, failed or cancelled; the bucket's lifecycle expires any left behind).
 *
 * Any step may crash and be delivered again. Each one is idempotent: status changes are conditional updates,
 * paystub ids and trace numbers are derived from the run and the entry (the run's block of trace sequences and its
 * file ID modifier are reserved in the same transaction that records its plan), files are rewritten byte for
 * byte, and finished chunks are a set. A re-run never duplicates a paystub, an entry, a file or a status change.
 */
export type ProcessorMessage =
  | { kind: 'start'; organization_id: string; payroll_id: string }
  | { kind: 'chunk'; organization_id: string; payroll_id: string; chunk: number }
  | { kind: 'finalize'; organization_id: string; payroll_id: string };

/** The event outbox's services (events, webhooks, webhook queue, deps) and the run's own. */
export interface ProcessorServices extends EventServices {
  payrolls: PayrollRepository;
  employees: EmployeeRepository;
  organizations: OrganizationRepository;
  sequences: DisbursementSequenceRepository;
  paystubs: PaystubRepository;
  objects: ObjectStore;
  queue: Queue;
  encryptor: FieldEncryptor;
  files: FileSealer;
  transactions: Transactions;
}

/**
 * A sandbox account number whose deposit comes back: the run completes, then the bank's return (R03) of that one
 * deposit is written as a bank would and applied through POST /v1/disbursement-returns' own code.
 */
export const SIMULATED_RETURN_ACCOUNT = '000000000';

interface ChunkFile {
  /** Index of the first entry of this chunk in the run: trace sequences are `trace_start + offset + i`. */
  offset: number;
  entries: PayrollEntry[];
}

/**
 * A chunk's NACHA entries between the chunk and finalize steps (objectKeys.chunkEntries): every field of each entry
 * record but the account number, which stays the employee's ciphertext as the chunk read it (an account changed
 * since does not change the file). The same chunk writes the same bytes again.
 */
interface EntriesFile {
  entries: PendingEntry[];
}
type PendingEntry = Omit<NachaEntryInput, 'accountNumber'> & { account_number_ciphertext: string };

/** Account numbers decrypted at once while a file is assembled (the data keys they need are unwrapped by KMS). */
const DECRYPT_PARALLEL = 32;

export async function processMessage(s: ProcessorServices, message: ProcessorMessage): Promise<void> {
  try {
    switch (message.kind) {
      case 'start':
        return await startRun(s, message.organization_id, message.payroll_id);
      case 'chunk':
        return await processChunk(s, message.organization_id, message.payroll_id, message.chunk);
      case 'finalize':
        return await finalizeRun(s, message.organization_id, message.payroll_id);
    }
  } catch (err) {
    // A file that cannot be written (the trace sequence used up, a field no file may carry) will not be writable on
    // the next attempt either: the run fails now, with the reason, instead of after the queue's retries.
    if (!(err instanceof TraceSequenceExhaustedError || err instanceof NachaFormatError)) throw err;
    await failRun(
      s,
      message.organization_id,
      message.payroll_id,
      `The disbursement file cannot be written: ${err.message}`,
    );
  }
}

async function loadSubmission(s: ProcessorServices, r: PayrollRecord): Promise<StoredSubmission> {
  const stored = await s.objects.getJson<StoredSubmission>(objectKeys.submission(r.organization_id, r.payroll_id));
  if (!stored) throw new Error(`The stored body of payroll ${r.payroll_id} is missing`);
  return stored;
}

async function startRun(s: ProcessorServices, orgId: string, payrollId: string): Promise<void> {
  let record = await s.payrolls.get(orgId, payrollId);
  if (!record) return;
  if (record.status === 'pending') {
    await transitionWithEvents(s, record, 'start');
    record = (await s.payrolls.get(orgId, payrollId))!;
  }
  if (record.status !== 'processing') return;

  if (record.chunk_count === null) {
    const [submission, settings] = await Promise.all([loadSubmission(s, record), s.organizations.getSettings(orgId)]);
    if (!settings) throw new Error(`Organization ${orgId} has no settings`);
    // What the compliance checks need, projected: the bank account numbers are read by the chunks alone.
    const employees = await s.employees.eligibility(
      orgId,
      submission.employees.map((e) => e.employee_id),
    );
    const facts = new Map<string, EmployeeFacts>(
      [...employees].map(([id, e]) => [
        id,
        {
          status: e.status,
          start_date: e.start_date,
          hasActiveBankAccount: e.bank_account?.status === 'active',
        },
      ]),
    );
    const caps = {
      maxNetPerEmployee: centsOf(settings.max_net_pay_per_employee),
      maxPayrollTotal: centsOf(settings.max_payroll_total),
    };
    const findings = complianceFindings(submission, facts, caps, record.environment);
    if (findings.length > 0) {
      const reason = `${findings.length} compliance finding(s): ${findings[0]!.message}`;
      await transitionWithEvents(s, record, 'reject', {
        details: { 'payroll.rejected': { extra: { reason, findings } } },
        reason,
        set: { findings },
      });
      return;
    }
    // Before any paystub exists, so a date-range query can never miss one of this run's.
    await s.paystubs.widenDateBounds(orgId, record);
    const chunkSize = chunkSizeFor(record.chunk_size, submission.employees.length);
    const chunkCount = Math.ceil(submission.employees.length / chunkSize);
    // Chunk files are derived from the stored body alone, so writing them again yields the same bytes.
    await Promise.all(
      Array.from({ length: chunkCount }, (_, i) => {
        const offset = i * chunkSize;
        const file: ChunkFile = { offset, entries: submission.employees.slice(offset, offset + chunkSize) };
        return s.objects.putJson(objectKeys.chunk(orgId, payrollId, i), file);
      }),
    );
    // Approval under `automatic` is the checks passing: recorded with the plan, in one write, so a re-run finds the
    // plan and emits no second approval. A run a person approved had its payroll.approved then.
    const approved = record.approved_by ? [] : [payrollEvent(s.deps, record, 'payroll.approved')];
    if (await planWithReservation(s, record, { chunkCount, chunkSize }, settings, s.events.items(approved))) {
      await dispatchQuietly(s, approved);
    }
    record = (await s.payrolls.get(orgId, payrollId))!;
    if (record.status !== 'processing') return;
  }
  const remaining = Array.from({ length: record.chunk_count! }, (_, i) => i).filter((i) => !record!.chunks_done.has(i));
  if (remaining.length === 0) {
    await s.queue.send({ kind: 'finalize', organization_id: orgId, payroll_id: payrollId } satisfies ProcessorMessage);
    return;
  }
  await s.queue.sendAll(
    remaining.map(
      (chunk) => ({ kind: 'chunk', organization_id: orgId, payroll_id: payrollId, chunk }) satisfies ProcessorMessage,
    ),
  );
}

/**
 * Reserves the run's trace block (one sequence per entry, and one per offset debit) and its file ID modifier,
 * and records the plan, in one transaction. Losing a race for a counter to another run of the organization cancels
 * the whole transaction: read the counters again and retry. Returns whether this call recorded the plan.
 */
async function planWithReservation(
  s: ProcessorServices,
  record: PayrollRecord,
  chunks: { chunkCount: number; chunkSize: number },
  settings: OrganizationSettings,
  alsoWrite: TransactItems,
): Promise<boolean> {
  const { originator } = settings;
  for (let attempt = 1; ; attempt++) {
    const now = s.deps.now();
    const reservation = await s.sequences.reserve(record.organization_id, {
      odfi: originator.originating_dfi_identification,
      destination: originator.immediate_destination,
      // The date the file's header carries: the writer is given this same instant (processing_started_at).
      creationDate: bankToday(now),
      traceCount: record.employee_count + (settings.funding_account ? offsetEntryCount(record.totals.net_pay) : 0),
      now,
      legacy: settings.sequences_since === undefined,
      payrollId: record.payroll_id,
      entries: record.employee_count,
    });
    const outcome = await s.payrolls.planChunks(
      record.organization_id,
      record.payroll_id,
      {
        ...chunks,
        startedAt: now.toISOString(),
        originator,
        fundingAccount: settings.funding_account,
        traceStart: reservation.traceStart,
        fileIdModifier: reservation.fileIdModifier,
      },
      [...reservation.items, ...alsoWrite],
    );
    if (outcome !== 'conflict') return outcome === 'planned';
    if (attempt >= PLAN_ATTEMPTS) throw new Error(`Could not reserve trace numbers after ${attempt} attempts`);
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
  }
}

/**
 * The entries of a chunk: at most the configured size, and small enough that a run has about ten chunks (never
 * under one BatchWriteItem's 25), so that a run's chunks are processed in parallel and its progress moves at least
 * every tenth of its entries. A function of the run alone: a start step run again writes the same chunk files.
 */
export function chunkSizeFor(configured: number, entries: number): number {
  return Math.min(configured, Math.max(MIN_CHUNK, Math.ceil(entries / 10)));
}
const MIN_CHUNK = 25;

/** Runs of one organization planned at once contend for its counters; each attempt lets at least one through. */
const PLAN_ATTEMPTS = 25;

function centsOf(text: string): number {
  const parsed = parseMoney(text);
  if (!parsed.ok) throw new Error(`Stored amount "${text}" is not money`);
  return parsed.cents;
}

async function processChunk(s: ProcessorServices, orgId: string, payrollId: string, chunk: number): Promise<void> {
  const record = await s.payrolls.get(orgId, payrollId);
  if ((record?.status === 'cancelled' || record?.status === 'failed') && record.chunk_count !== null) {
    // Delivered again after the run ended, perhaps after a crash between writing its paystubs and marking it done:
    // whatever this chunk wrote is voided.
    const file = await s.objects.getJson<ChunkFile>(objectKeys.chunk(orgId, payrollId, chunk));
    if (file) await s.paystubs.voidAll(file.entries.map((e, i) => paystubIdOf(record, file.offset + i, e.employee_id)));
    return;
  }
  if (
    record?.status !== 'processing' ||
    record.chunk_count === null ||
    !record.originator ||
    !record.processing_started_at
  )
    return;
  if (!record.chunks_done.has(chunk)) {
    const file = await s.objects.getJson<ChunkFile>(objectKeys.chunk(orgId, payrollId, chunk));
    if (!file) throw new Error(`Chunk ${chunk} of payroll ${payrollId} is missing`);
    const employees = await s.employees.getMany(
      orgId,
      file.entries.map((e) => e.employee_id),
    );
    const odfi = record.originator.originating_dfi_identification;
    const issued = record.processing_started_at;
    const { traceStart } = fileNumbering(record);
    const effectiveDate = effectiveEntryDate(record.pay_date);
    const paystubs: PaystubRecord[] = [];
    const pending: PendingEntry[] = [];
    const returned: string[] = [];
    for (const [i, entry] of file.entries.entries()) {
      const employee = employees.get(entry.employee_id);
      const bank = employee?.bank_account;
      // Verified at start; an employee removed since is still paid for work already done in the period.
      if (!employee || !bank)
        throw new Error(`Employee ${entry.employee_id} or their bank account disappeared during processing`);
      const net = netPay(entry);
      const sequence = traceStart + file.offset + i;
      let trace: string | null = null;
      if (net > 0) {
        const accountNumber = await s.encryptor.decrypt(bank.account_number_ciphertext, orgId);
        if (record.environment === 'sandbox' && accountNumber === SIMULATED_RETURN_ACCOUNT)
          returned.push(entry.employee_id);
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
        pending.push({ ...fields, account_number_ciphertext: bank.account_number_ciphertext });
      }
      paystubs.push({
        paystub_id: paystubIdOf(record, file.offset + i, entry.employee_id),
        organization_id: orgId,
        employee_id: entry.employee_id,
        payroll_id: payrollId,
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
          effective_entry_date: net > 0 ? effectiveDate : null,
        },
        status: 'issued',
        created_at: issued,
      });
    }
    await Promise.all([
      s.paystubs.putAll(paystubs),
      s.objects.putJson(objectKeys.chunkEntries(orgId, payrollId, chunk), { entries: pending } satisfies EntriesFile),
    ]);
    const updated = await s.payrolls.markChunkDone(orgId, payrollId, chunk, returned, s.deps.now().toISOString());
    if (!updated) {
      // No longer processing, or a twin delivery of this message finished the chunk first (its paystubs are the
      // same items, written twice). Cancelled (or failed) while this chunk was written: the cancel voided what
      // existed then, and this chunk voids what it added since, so no paystub of such a run stays `issued`.
      // Completed (this was a late duplicate of a chunk already done): its paystubs are the run's, and stay as they are.
      const now = await s.payrolls.get(orgId, payrollId);
      if (now?.status === 'cancelled' || now?.status === 'failed')
        await s.paystubs.voidAll(paystubs.map((p) => p.paystub_id));
      return;
    }
    // Counted by the one call that marked the chunk done: a chunk delivered again counts nothing.
    businessMetrics.count(METRIC_NAMES.paystubsWritten, paystubs.length);
    if (updated.chunks_done.size === updated.chunk_count) {
      await s.queue.send({
        kind: 'finalize',
        organization_id: orgId,
        payroll_id: payrollId,
      } satisfies ProcessorMessage);
    }
    return;
  }
  // A re-delivered chunk whose work is done: make sure the run still gets finalized if that message was lost.
  if (record.chunks_done.size === record.chunk_count) {
    await s.queue.send({ kind: 'finalize', organization_id: orgId, payroll_id: payrollId } satisfies ProcessorMessage);
  }
}

/**
 * Writes the run's NACHA file sealed under the run's own key (reserved on the run's item first, so finalizers that
 * race seal with the same key), in production locked against deletion for the organization's retention period. False when the
 * run left `processing` before its key was reserved: no readable file is ever written for it.
 */
const DAY_MS = 86_400_000;

async function storeSealedFile(s: ProcessorServices, record: PayrollRecord, content: string): Promise<boolean> {
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

async function finalizeRun(s: ProcessorServices, orgId: string, payrollId: string): Promise<void> {
  const record = await s.payrolls.get(orgId, payrollId);
  // A finalize delivered again after completion: the sandbox's returns may not be applied yet.
  if (record?.status === 'completed') return simulateBankReturns(s, record);
  // After the run ended without completing (a failure whose voiding was cut short, a cancel): finish voiding.
  if (record?.status === 'failed' || record?.status === 'cancelled') {
    await voidWrittenPaystubs(s, record);
    return;
  }
  if (
    record?.status !== 'processing' ||
    record.chunk_count === null ||
    !record.originator ||
    !record.processing_started_at
  )
    return;
  if (record.chunks_done.size < record.chunk_count) return; // the last chunk will send finalize again
  // The sandbox's processing failure: after the paystubs exist, before the file is released.
  if (
    record.environment === 'sandbox' &&
    (await loadSubmission(s, record)).employees.some((e) => e.notes === SIMULATE_FAIL_NOTE)
  ) {
    await failRun(s, orgId, payrollId, 'Processing failed on request (notes: simulate:fail)');
    return;
  }
  const parts = await Promise.all(
    Array.from({ length: record.chunk_count }, async (_, i): Promise<(PendingEntry | string)[]> => {
      const file = await s.objects.getJson<EntriesFile>(objectKeys.chunkEntries(orgId, payrollId, i));
      if (!file) throw new Error(`Entries of chunk ${i} of payroll ${payrollId} are missing`);
      return file.entries;
    }),
  );
  const entries = await entryRecords(s, orgId, record.originator.originating_dfi_identification, parts.flat());
  let disbursement: PayrollRecord['disbursement'] = null;
  if (entries.length > 0) {
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
    if (!(await storeSealedFile(s, record, file.content))) return; // cancelled or failed meanwhile: nothing to release
    disbursement = {
      entry_count: file.control.entryAddendaCount,
      entry_hash: file.control.entryHash,
      total_credit: file.control.totalCreditCents,
      total_debit: file.control.totalDebitCents,
      batch_count: file.control.batchCount,
      block_count: file.control.blockCount,
      created_at: record.processing_started_at,
    };
  }
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
          payroll_id: payrollId,
          paystub_count: record.employee_count,
          pay_date: record.pay_date,
          paystubs_url: `/v1/paystubs?payroll_id=${payrollId}`,
        },
      },
    },
    set: { disbursement },
    at: now,
  });
  // Completed here, or ended by a cancel that came first (then nothing comes back from the bank).
  await simulateBankReturns(s, (await s.payrolls.get(orgId, payrollId))!);
}

/**
 * The entry records of the file, in the order given: each pending entry's account number decrypted, in memory only,
 * and its record built as the chunk built it (byte for byte: the record is a function of these fields alone).
 */
async function entryRecords(
  s: ProcessorServices,
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

/**
 * The sandbox's bank: the deposits to account 000000000 of a completed run come back R03, in a return file written
 * as a bank writes one and applied by the code that applies a bank's file. Idempotent: applied again, it changes
 * nothing (the finalize message may be delivered more than once).
 */
async function simulateBankReturns(s: ProcessorServices, record: PayrollRecord): Promise<void> {
  if (
    record.status !== 'completed' ||
    record.environment !== 'sandbox' ||
    record.returned_employee_ids.size === 0 ||
    !record.originator
  )
    return;
  const employees = await payrollEmployeeIds(s.objects, record.organization_id, record.payroll_id);
  const stubs = (
    await s.paystubs.getMany(
      employees.flatMap((id, i) => (record.returned_employee_ids.has(id) ? [paystubIdOf(record, i, id)] : [])),
    )
  ).filter((p) => p.payment.trace_number !== null && !p.payment.return);
  if (stubs.length === 0) return;
  // In files of at most what one report may carry, as a bank would split them.
  for (let i = 0; i < stubs.length; i += MAX_REPORT_ITEMS) {
    const file = writeReturnFile(
      record.originator.immediate_destination.trim(),
      stubs[0]!.payment.routing_number,
      record.originator.company_identification,
      s.deps.now(),
      stubs.slice(i, i + MAX_REPORT_ITEMS).map((p) => ({
        originalTrace: p.payment.trace_number!,
        code: 'R03',
        amountCents: p.net_pay,
        routingNumber: p.payment.routing_number,
        accountLast4: p.payment.account_number_last4,
        accountType: p.payment.account_type,
        individualId: p.employee_id.slice(-15),
      })),
    );
    await applyBankReport(s, record.organization_id, readBankReport(file));
  }
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

/**
 * A run's paystub ids, whether or not each was written: by entry, from its size; by employee (runs planned before
 * paystubs were named by entry), from its stored list of employees.
 */
export async function runPaystubIds(
  s: Pick<ProcessorServices, 'objects'>,
  record: Pick<PayrollRecord, 'organization_id' | 'payroll_id' | 'employee_count' | 'paystub_naming'>,
): Promise<string[]> {
  if (record.paystub_naming === 'entry')
    return Array.from({ length: record.employee_count }, (_, i) => entryPaystubId(record.payroll_id, i));
  const employees = await payrollEmployeeIds(s.objects, record.organization_id, record.payroll_id);
  return employees.map((id, i) => paystubIdOf(record, i, id));
}

/**
 * A run that ended before its file was released (failed, cancelled): the paystubs its chunks already wrote are
 * voided, each with a conditional update of its own: a payment still `scheduled` becomes `cancelled`, one the bank
 * has returned in the meantime keeps its return (a whole-item write from an earlier read would erase it). A paystub
 * not written yet is left unwritten. None exist before the chunks were planned.
 */
export async function voidWrittenPaystubs(
  s: Pick<ProcessorServices, 'paystubs' | 'objects'>,
  record: PayrollRecord,
): Promise<number> {
  if (record.chunk_count === null) return 0;
  return s.paystubs.voidAll(await runPaystubIds(s, record));
}

/**
 * The run is marked failed with the reason, so nothing stays `processing` after the queue gives up on it. Paystubs
 * its chunks already wrote are voided, their payments `cancelled` (no file was released, so no money moves): a
 * failed run must not leave statements saying `issued` and `scheduled`. The status comes first, in its own
 * transaction with the event; voiding is repeatable, so a failure half-way is finished by calling this again.
 */
export async function failRun(
  s: ProcessorServices,
  orgId: string,
  payrollId: string,
  reason: string,
): Promise<boolean> {
  const record = await s.payrolls.get(orgId, payrollId);
  if (!record) return false;
  let moved = false;
  if (record.status !== 'failed') {
    moved = await transitionWithEvents(s, record, 'fail', {
      details: { 'payroll.failed': { extra: { reason } } },
      reason,
      set: { failure_reason: reason },
    });
  }
  if (moved || record.status === 'failed') await voidWrittenPaystubs(s, record);
  return moved;
}

/**
 * Sends `start` again for every run not finished and not changed since `staleBefore`. Starting is idempotent, so
 * a run that is merely slow loses nothing, and a run whose messages were lost (a crash, a purged queue, the local
 * stack's in-memory queue across a restart) picks up where its finished chunks left off.
 */
export async function resumeUnfinishedRuns(
  s: Pick<ProcessorServices, 'payrolls' | 'queue'>,
  staleBefore: Date,
): Promise<number> {
  const runs = await s.payrolls.listUnfinished(staleBefore.toISOString(), 1000);
  await s.queue.sendAll(
    runs.map(
      (r) =>
        ({ kind: 'start', organization_id: r.organization_id, payroll_id: r.payroll_id }) satisfies ProcessorMessage,
    ),
  );
  return runs.length;
}
