import { logger } from '../../shared/adapters/logger.js';
import { processorServices } from '../../shared/http/processor-services.js';
import { resumeUnfinishedRuns } from '../../shared/use-cases/process-payroll.js';

/** Stuck-run sweeper, run on a schedule: runs untouched for 15 minutes get their start message again. */
const STALE_AFTER_MS = 15 * 60_000;

export const handler = async (): Promise<{ resumed: number }> => {
  const resumed = await resumeUnfinishedRuns(processorServices(), new Date(Date.now() - STALE_AFTER_MS));
  if (resumed > 0) logger.warn('resumed unfinished payroll runs', { resumed });
  return { resumed };
};
