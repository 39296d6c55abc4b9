import { logger } from '../../shared/adapters/logger.js';
import { eventServices, payrollQueueOf } from '../../shared/http/record-services.js';
import { resumeUndispatchedEvents } from '../../shared/use-cases/events.js';
import { resumeUnfinishedRuns } from '../../shared/use-cases/process-payroll.js';

/**
 * The sweeper, run on a schedule: runs untouched for 15 minutes get their start message again, and events still in
 * the outbox after a minute (their fan-out was interrupted) are fanned out. Both are idempotent.
 */
const STALE_RUN_MS = 15 * 60_000;
const STALE_EVENT_MS = 60_000;

export const handler = async (): Promise<{ resumed: number; dispatched: number }> => {
  const s = eventServices();
  const now = Date.now();
  const resumed = await resumeUnfinishedRuns({ payrolls: s.payrolls, queue: payrollQueueOf() }, new Date(now - STALE_RUN_MS));
  const dispatched = await resumeUndispatchedEvents(s, new Date(now - STALE_EVENT_MS));
  if (resumed + dispatched > 0) logger.warn('sweeper resumed work', { resumed, dispatched });
  return { resumed, dispatched };
};
