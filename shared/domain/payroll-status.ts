import {
  PAYROLL_STATUSES,
  PAYROLL_TRANSITIONS,
  type PayrollStatus,
  type TransitionDeclaration,
} from './payroll-lifecycle.js';

/**
 * The statuses of a payroll run, as the lifecycle declares them (shared/domain/payroll-lifecycle.ts). A payroll never
 * moves backwards: every transition is a conditional update on the current status, so a re-delivered message that
 * tries an old transition changes nothing. A cancel that meets a run in `processing` wins: the run never becomes
 * `completed` afterwards, and a chunk that finishes after the cancel voids the paystubs it wrote.
 */
export { PAYROLL_STATUSES, canTransition, isTerminal, type PayrollStatus } from './payroll-lifecycle.js';

/** Statuses from which `to` can be reached directly by some event. */
export function sourcesOf(to: PayrollStatus): PayrollStatus[] {
  const declared: TransitionDeclaration[] = Object.values(PAYROLL_TRANSITIONS);
  return PAYROLL_STATUSES.filter((from) => declared.some((t) => t.to === to && t.from.includes(from)));
}
