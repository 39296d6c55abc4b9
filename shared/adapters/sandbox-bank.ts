import type { PaystubRecord } from '../data/paystub-repository.js';
import type { Finding } from '../domain/compliance.js';
import type { PayrollSubmission } from '../domain/payroll.js';
import { MAX_REPORT_ITEMS } from '../schemas/disbursement-returns.js';
import type { Bank } from './bank.js';
import { writeReturnFile } from './nacha-returns.js';

/** Sandbox: an entry noted so is rejected by the compliance review, so integrators can exercise the rejected path. */
export const SIMULATE_REJECT_NOTE = 'simulate:reject';
/** Sandbox: an entry noted so makes its run fail in processing, after its paystubs are written. */
export const SIMULATE_FAIL_NOTE = 'simulate:fail';
/**
 * A sandbox account number whose deposit comes back: the run completes, then the bank's return (R03) of that one
 * deposit is written as a bank would and applied through POST /v1/disbursement-returns' own code.
 */
export const SIMULATED_RETURN_ACCOUNT = '000000000';

/**
 * The sandbox's simulated bank: it rejects entries noted `simulate:reject`, fails runs with an entry noted
 * `simulate:fail`, and returns (R03) every deposit to account 000000000 in a return file written as a bank writes
 * one. Applied again, the same returns change nothing (the processor passes only deposits not returned yet).
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
  returnsDeposit: (accountNumber) => accountNumber === SIMULATED_RETURN_ACCOUNT,
  returnFiles: (run, deposits, at) => {
    if (!run.originator || deposits.length === 0) return [];
    const { originator } = run;
    const files: string[] = [];
    // In files of at most what one report may carry, as a bank would split them.
    for (let i = 0; i < deposits.length; i += MAX_REPORT_ITEMS) {
      files.push(
        writeReturnFile(
          originator.immediate_destination.trim(),
          deposits[0]!.payment.routing_number,
          originator.company_identification,
          at(),
          deposits.slice(i, i + MAX_REPORT_ITEMS).map(returnOf),
        ),
      );
    }
    return files;
  },
};

function returnOf(p: PaystubRecord) {
  return {
    originalTrace: p.payment.trace_number!,
    code: 'R03',
    amountCents: p.net_pay,
    routingNumber: p.payment.routing_number,
    accountLast4: p.payment.account_number_last4,
    accountType: p.payment.account_type,
    individualId: p.employee_id.slice(-15),
  };
}
