import type { PayrollRecord } from '../data/payroll-repository.js';
import { NotFoundError, PayrollNotCancellableError, SandboxOnlyError } from '../domain/errors.js';
import { transition } from '../domain/payroll-lifecycle.js';
import { transitionWithEvents } from './payroll-transitions.js';
import { voidWrittenPaystubs } from './processor/end-run.js';
import type { ProcessorServices } from './processor/services.js';

/**
 * Cancels a run as the lifecycle allows: a run awaiting approval in every environment (it moved nothing), a run past
 * approval in the sandbox only. Frees the pay period's window for a new regular run and voids the run's paystubs
 * (they stay readable). Of two cancels, the second (or the loser of a race) answers 409 `payroll_not_cancellable`; it
 * still finishes voiding the paystubs, so a cancel that crashed half-way is completed by the next attempt.
 */
export async function cancelPayroll(
  s: Pick<ProcessorServices, 'payrolls' | 'paystubs' | 'objects' | 'deps' | 'events' | 'webhooks' | 'webhookQueue'>,
  environment: 'sandbox' | 'production',
  orgId: string,
  payrollId: string,
): Promise<PayrollRecord> {
  const record = await s.payrolls.get(orgId, payrollId);
  // Outside the sandbox, an unknown run answers as any run past approval does: nothing to learn from the status.
  if (!record) throw environment === 'sandbox' ? new NotFoundError() : new SandboxOnlyError();
  const allowed = transition(record.status, 'cancel', { environment });
  if (!allowed.ok && allowed.reason === 'sandbox_only') throw new SandboxOnlyError();
  if (record.status === 'cancelled') return refuseAgain(s, record);
  if (!allowed.ok) throw new PayrollNotCancellableError(record.status);
  // Money already came back or was asked again for this run: withdrawing its file would leave those files live.
  if (hasMoneyBack(record)) throw new PayrollNotCancellableError(record.status, 'it has reversals or re-debits');
  const cancelled = await transitionWithEvents(s, record, 'cancel', {
    reason: environment === 'sandbox' ? 'Cancelled through the API (sandbox)' : 'Cancelled before approval',
    alsoWrite: s.payrolls.windowRelease(record),
    context: { environment },
  });
  const now = (await s.payrolls.get(orgId, payrollId))!;
  if (!cancelled) {
    // It moved since it was read: an approval came first (production refuses the cancel now), or another cancel.
    if (now.status === 'cancelled') return refuseAgain(s, now);
    const again = transition(now.status, 'cancel', { environment });
    if (!again.ok && again.reason === 'sandbox_only') throw new SandboxOnlyError();
    // A reversal or re-debit written between the read and the cancel's write: the write refused the cancel.
    if (hasMoneyBack(now)) throw new PayrollNotCancellableError(now.status, 'it has reversals or re-debits');
    throw new PayrollNotCancellableError(now.status);
  }
  await voidAndRecord(s, now);
  return now;
}

/** Money already came back or was asked again through the run's file: the same rule its conditional write holds. */
const hasMoneyBack = (record: PayrollRecord) =>
  record.reversals_count > 0 || (record.funding?.redebits.length ?? 0) > 0;

type Services = Parameters<typeof voidWrittenPaystubs>[0] & Pick<ProcessorServices, 'payrolls' | 'deps'>;

/** Voids the run's paystubs and records that it is done, so a repeated cancel costs one read, not a write a paystub. */
async function voidAndRecord(s: Services, record: PayrollRecord): Promise<void> {
  if (record.paystubs_voided_at) return;
  await voidWrittenPaystubs(s, record);
  await s.payrolls.markPaystubsVoided(record.organization_id, record.payroll_id, s.deps.now().toISOString());
}

async function refuseAgain(s: Services, record: PayrollRecord): Promise<never> {
  await voidAndRecord(s, record);
  throw new PayrollNotCancellableError(record.status);
}
