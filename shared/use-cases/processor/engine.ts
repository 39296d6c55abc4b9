import { NachaFormatError } from '../../adapters/nacha.js';
import { TraceSequenceExhaustedError } from '../../data/disbursement-sequence-repository.js';
import { failRun } from './end-run.js';
import { finalizeRun } from './finalize-run.js';
import { processChunk } from './process-chunk.js';
import type { EngineServices, ProcessorMessage } from './services.js';
import { startRun } from './start-run.js';

/** Runs one step of a run, with the banks the wiring chose. */
export async function runStep(s: EngineServices, message: ProcessorMessage): Promise<void> {
  try {
    switch (message.kind) {
      case 'start':
        return await startRun(s, message.organization_id, message.payroll_id);
      case 'chunk':
        return await processChunk(s, message.organization_id, message.payroll_id, message.chunk);
      case 'finalize':
        return await finalizeRun(s, message.organization_id, message.payroll_id);
    }
  } catch (err) {
    // A file that cannot be written (the trace sequence used up, a field no file may carry) will not be writable on
    // the next attempt either: the run fails now, with the reason, instead of after the queue's retries.
    if (!(err instanceof TraceSequenceExhaustedError || err instanceof NachaFormatError)) throw err;
    await failRun(
      s,
      message.organization_id,
      message.payroll_id,
      `The disbursement file cannot be written: ${err.message}`,
    );
  }
}
