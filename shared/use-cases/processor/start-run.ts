import { objectKeys } from '../../adapters/object-store.js';
import type { TransactItems } from '../../data/item.js';
import type { PayrollRecord } from '../../data/payroll-repository.js';
import { complianceFindings, type EmployeeFacts, type Finding } from '../../domain/compliance.js';
import { bankToday, offsetEntryCount } from '../../domain/disbursement.js';
import { parseMoney } from '../../domain/money.js';
import { mayTake } from '../../domain/payroll-lifecycle.js';
import type { OrganizationSettings } from '../../domain/settings.js';
import { dispatchQuietly, payrollEvent } from '../events.js';
import { transitionWithEvents } from '../payroll-transitions.js';
import type { StoredSubmission } from '../submit-payroll.js';
import { bankOf, type ChunkFile, type EngineServices, loadSubmission, step } from './services.js';

/**
 * The start step: the run is started, checked (eligibility, compliance, the bank's own review), split into chunks
 * with its trace block reserved, and one message sent per chunk not done yet. Each part is taken only while the
 * lifecycle allows it: `start` from where the run may take it, planning and sending only while it may still finish.
 */
export async function startRun(s: EngineServices, orgId: string, payrollId: string): Promise<void> {
  let record = await s.payrolls.get(orgId, payrollId);
  if (!record) return;
  if (mayTake(record.status, 'start')) {
    await transitionWithEvents(s, record, 'start');
    record = (await s.payrolls.get(orgId, payrollId))!;
  }
  if (!mayTake(record.status, 'finish')) return;
  if (record.chunk_count === null) {
    if (!(await planRun(s, record))) return;
    record = (await s.payrolls.get(orgId, payrollId))!;
    if (!mayTake(record.status, 'finish')) return;
  }
  const done = record.chunks_done;
  const remaining = Array.from({ length: record.chunk_count! }, (_, i) => i).filter((i) => !done.has(i));
  if (remaining.length === 0) {
    await s.queue.send(step.finalize(orgId, payrollId));
    return;
  }
  await s.queue.sendAll(remaining.map((chunk) => step.chunk(orgId, payrollId, chunk)));
}

/** Checks the run, then writes its chunk files and records its plan. False when the checks rejected it. */
async function planRun(s: EngineServices, record: PayrollRecord): Promise<boolean> {
  const { organization_id: orgId, payroll_id: payrollId } = record;
  const [submission, settings] = await Promise.all([loadSubmission(s, record), s.organizations.getSettings(orgId)]);
  if (!settings) throw new Error(`Organization ${orgId} has no settings`);
  const findings = await reviewRun(s, record, submission, settings);
  if (findings.length > 0) {
    const reason = `${findings.length} compliance finding(s): ${findings[0]!.message}`;
    await transitionWithEvents(s, record, 'reject', {
      details: { 'payroll.rejected': { extra: { reason, findings } } },
      reason,
      set: { findings },
    });
    return false;
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
  return true;
}

/** The compliance checks over the employees as they stand, with the findings of the run's bank. */
async function reviewRun(
  s: EngineServices,
  record: PayrollRecord,
  submission: StoredSubmission,
  settings: OrganizationSettings,
): Promise<Finding[]> {
  // What the compliance checks need, projected: the bank account numbers are read by the chunks alone.
  const employees = await s.employees.eligibility(
    record.organization_id,
    submission.employees.map((e) => e.employee_id),
  );
  const facts = new Map<string, EmployeeFacts>(
    [...employees].map(([id, e]) => [
      id,
      { status: e.status, start_date: e.start_date, hasActiveBankAccount: e.bank_account?.status === 'active' },
    ]),
  );
  const caps = {
    maxNetPerEmployee: centsOf(settings.max_net_pay_per_employee),
    maxPayrollTotal: centsOf(settings.max_payroll_total),
  };
  return complianceFindings(submission, facts, caps, bankOf(s, record).reviewEntries(submission));
}

/**
 * Reserves the run's trace block (one sequence per entry, and one per offset debit) and its file ID modifier,
 * and records the plan, in one transaction. Losing a race for a counter to another run of the organization cancels
 * the whole transaction: read the counters again and retry. Returns whether this call recorded the plan.
 */
async function planWithReservation(
  s: EngineServices,
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
      owner: { payrollId: record.payroll_id },
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
