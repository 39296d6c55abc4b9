import type { Finding } from '../domain/compliance.js';
import type { PayrollSubmission } from '../domain/payroll.js';
import type { Bank } from './bank.js';

/** Sandbox: an entry noted so is rejected by the compliance review, so integrators can exercise the rejected path. */
export const SIMULATE_REJECT_NOTE = 'simulate:reject';
/** Sandbox: an entry noted so makes its run fail in processing, after its paystubs are written. */
export const SIMULATE_FAIL_NOTE = 'simulate:fail';
/**
 * A sandbox account number whose deposit comes back: the run completes and its file goes to the sandbox bank by the
 * bank link; the bank writes the return (R03) of that one deposit as a bank does, and the link's next pass picks it
 * up and applies it through the one returns intake. Nothing here simulates it.
 */
export const SIMULATED_RETURN_ACCOUNT = '000000000';

/**
 * The sandbox's review of a run: it rejects entries noted `simulate:reject` and fails runs with an entry noted
 * `simulate:fail`. Returned deposits are the sandbox bank's to send (the local stack's SFTP sandbox bank).
 */
export const sandboxBank: Bank = {
  reviewEntries: (submission: PayrollSubmission): Finding[] =>
    submission.employees
      .filter((entry) => entry.notes === SIMULATE_REJECT_NOTE)
      .map((entry) => ({
        code: 'simulated_rejection',
        message: 'Rejected on request (notes: simulate:reject)',
        employee_id: entry.employee_id,
      })),
  failsProcessing: async (submission) =>
    (await submission()).employees.some((e) => e.notes === SIMULATE_FAIL_NOTE)
      ? 'Processing failed on request (notes: simulate:fail)'
      : undefined,
};
