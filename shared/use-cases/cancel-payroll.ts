import type { PayrollRecord } from '../data/payroll-repository.js';
import { NotFoundError, PayrollNotCancellableError, SandboxOnlyError } from '../domain/errors.js';
import { canTransition } from '../domain/payroll-status.js';
import { transitionWithEvents } from './payroll-transitions.js';
import { type ProcessorServices, voidWrittenPaystubs } from './process-payroll.js';

/**
 * Sandbox only. Frees the pay period's window for a new regular run and voids the run's paystubs (they stay
 * readable). Cancelling twice answers the cancelled run again.
 */
export async function cancelPayroll(
  s: Pick<ProcessorServices, 'payrolls' | 'paystubs' | 'objects' | 'deps' | 'events' | 'webhooks' | 'webhookQueue'>,
  environment: 'sandbox' | 'production',
  orgId: string,
  payrollId: string,
): Promise<PayrollRecord> {
  if (environment !== 'sandbox') throw new SandboxOnlyError();
  let record = await s.payrolls.get(orgId, payrollId);
  if (!record) throw new NotFoundError();
  if (record.status !== 'cancelled') {
    if (!canTransition(record.status, 'cancelled')) throw new PayrollNotCancellableError(record.status);
    const cancelled = await transitionWithEvents(s, record, 'cancelled', {
      events: [{ type: 'payroll.cancelled' }],
      reason: 'Cancelled through the API (sandbox)',
      alsoWrite: s.payrolls.windowRelease(record),
    });
    if (!cancelled) {
      const now = (await s.payrolls.get(orgId, payrollId))!;
      if (now.status !== 'cancelled') throw new PayrollNotCancellableError(now.status);
    }
    record = (await s.payrolls.get(orgId, payrollId))!;
  }
  await voidWrittenPaystubs(s, record);
  return record;
}
