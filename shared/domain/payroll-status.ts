/**
 * The payroll state machine. A payroll never moves backwards: every transition is a conditional update on the
 * current status, so a re-delivered message that tries an old transition changes nothing.
 *
 *   pending ──► processing ──► completed ──► cancelled (sandbox only; its paystubs are voided)
 *      │            ├────────► rejected   (a compliance check failed)
 *      │            ├────────► failed     (disbursement or processing failed)
 *      │            └────────► cancelled  (sandbox only: the cancel wins over the chunks still being written)
 *      ├─────────────────────► cancelled  (sandbox only)
 *      └─────────────────────► failed
 *
 * A cancel that meets a run in `processing` wins: the run never becomes `completed` afterwards (every step of the
 * processor is conditional on `processing`), and a chunk that finishes after the cancel voids the paystubs it wrote.
 */
export const PAYROLL_STATUSES = ['pending', 'processing', 'completed', 'rejected', 'failed', 'cancelled'] as const;
export type PayrollStatus = (typeof PAYROLL_STATUSES)[number];

const ALLOWED: Record<PayrollStatus, readonly PayrollStatus[]> = {
  pending: ['processing', 'failed', 'cancelled'],
  processing: ['completed', 'rejected', 'failed', 'cancelled'],
  completed: ['cancelled'],
  rejected: [],
  failed: [],
  cancelled: [],
};

export function canTransition(from: PayrollStatus, to: PayrollStatus): boolean {
  return ALLOWED[from].includes(to);
}

export function isTerminal(status: PayrollStatus): boolean {
  return status === 'rejected' || status === 'failed' || status === 'cancelled' || status === 'completed';
}

/** Statuses from which `to` can be reached directly: the condition of the conditional update. */
export function sourcesOf(to: PayrollStatus): PayrollStatus[] {
  return PAYROLL_STATUSES.filter((from) => ALLOWED[from].includes(to));
}
