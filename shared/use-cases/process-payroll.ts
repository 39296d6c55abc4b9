import { type Banks, productionBank } from '../adapters/bank.js';
import { sandboxBank } from '../adapters/sandbox-bank.js';
import { runStep } from './processor/engine.js';
import type { ProcessorMessage, ProcessorServices } from './processor/services.js';

/**
 * The processing pipeline, driven by three kinds of queue message (the steps live in ./processor/):
 *
 *   start     verify again, run the compliance checks, split the run into chunks, enqueue one message per chunk
 *   chunk     check the chunk's accounts, write its paystubs and its pending NACHA entries, mark the chunk done
 *   finalize  once every chunk is done, assemble the NACHA file, and complete (or fail) the run
 *
 * Each step asks the run's lifecycle (shared/domain/payroll-lifecycle.ts) whether it applies, and meets the bank of
 * the run's environment through the Bank adapter (shared/adapters/bank.ts) chosen at wiring.
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
export type { ProcessorMessage, ProcessorServices } from './processor/services.js';
export { chunkSizeFor } from './processor/start-run.js';
export {
  failOnLastAttempt,
  failRun,
  resumeUnfinishedRuns,
  runPaystubIds,
  voidWrittenPaystubs,
} from './processor/end-run.js';
export { SIMULATED_RETURN_ACCOUNT } from '../adapters/sandbox-bank.js';

/** The banks of the standard wiring: production's, which adds nothing, and the sandbox's simulated one. */
export const STANDARD_BANKS: Banks = { sandbox: sandboxBank, production: productionBank };

/** Runs one step of a run, with the banks its services were wired with (the standard ones when none were). */
export async function processMessage(s: ProcessorServices, message: ProcessorMessage): Promise<void> {
  return runStep({ ...s, banks: s.banks ?? STANDARD_BANKS }, message);
}
