import type { PayrollRecord } from '../data/payroll-repository.js';
import type { Finding } from '../domain/compliance.js';
import type { PayrollSubmission } from '../domain/payroll.js';

/**
 * The bank a run's file goes to, as the processor meets it: the bank answers by findings on the run's entries, by
 * failing its processing, and by files of returned deposits, which the processor applies through the same returns
 * intake as a file an organization posts (applyBankReport). Which bank serves a run is chosen at wiring, by the run's
 * environment (Banks): production's does nothing beyond moving the money, the sandbox's simulates (sandbox-bank.ts).
 */
export interface Bank {
  /** Findings the bank raises on the run's entries at its compliance review, each naming the employee it concerns. */
  reviewEntries(submission: PayrollSubmission): Finding[];
  /**
   * Why processing fails once the run's paystubs exist and before its file is released, or undefined. The
   * submission is read only if the bank asks for it.
   */
  failsProcessing(submission: () => Promise<PayrollSubmission>): Promise<string | undefined>;
}

/** The bank of each environment, chosen by the wiring. */
export type Banks = Record<PayrollRecord['environment'], Bank>;

/** A bank that adds nothing: no findings, no failure, no returns but those an organization posts. */
export const productionBank: Bank = {
  reviewEntries: () => [],
  failsProcessing: async () => undefined,
};
