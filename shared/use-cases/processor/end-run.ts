import type { PayrollRecord } from '../../data/payroll-repository.js';
import { entryPaystubId, paystubIdOf } from '../../data/paystub-repository.js';
import { mayTake, reachedBy } from '../../domain/payroll-lifecycle.js';
import { payrollEmployeeIds } from '../payroll-employee-ids.js';
import { transitionWithEvents } from '../payroll-transitions.js';
import type { ProcessorMessage, ProcessorServices } from './services.js';

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
  const failed = reachedBy(record.status, 'fail');
  const moved =
    !failed &&
    mayTake(record.status, 'fail') &&
    (await transitionWithEvents(s, record, 'fail', {
      details: { 'payroll.failed': { extra: { reason } } },
      reason,
      set: { failure_reason: reason },
    }));
  if (moved || failed) await voidWrittenPaystubs(s, record);
  return moved;
}

/**
 * The failure policy of a step that threw: on the attempt after which the queue gives up (the message goes to the
 * dead-letter queue), the run must not stay `processing` forever, so it ends `failed` with the reason. Returns that
 * reason, or undefined when the queue will try the step again.
 */
export async function failOnLastAttempt(
  s: ProcessorServices,
  message: ProcessorMessage,
  error: Error,
  attempt: { receives: number; maxReceives: number },
): Promise<string | undefined> {
  if (attempt.receives < attempt.maxReceives) return undefined;
  const reason = `Processing failed after ${attempt.receives} attempts (${message.kind} step): ${error.name}`;
  await failRun(s, message.organization_id, message.payroll_id, reason);
  return reason;
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
