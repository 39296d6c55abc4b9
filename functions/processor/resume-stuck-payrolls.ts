import { logger } from '../../shared/adapters/logger.js';
import { eventServices, payrollQueueOf } from '../../shared/http/record-services.js';
import { config } from '../../shared/config/env.js';
import {
  pendingDeliveryStaleMs,
  resumePendingDeliveries,
  resumeUndispatchedEvents,
} from '../../shared/use-cases/events.js';
import { resumeUnfinishedRuns } from '../../shared/use-cases/process-payroll.js';

/**
 * The sweeper, run on a schedule: runs untouched for 15 minutes get their start message again, events still in
 * the outbox after a minute (their fan-out was interrupted) are fanned out, and deliveries left pending long past
 * their last retry delay (their message was lost) are sent again. All are idempotent.
 */
const STALE_RUN_MS = 15 * 60_000;
const STALE_EVENT_MS = 60_000;

export const handler = async (): Promise<{
  resumed: number;
  dispatched: number;
  redelivered: number;
  abandoned: number;
}> => {
  const s = eventServices();
  const now = Date.now();
  const resumed = await resumeUnfinishedRuns(
    { payrolls: s.payrolls, queue: payrollQueueOf() },
    new Date(now - STALE_RUN_MS),
  );
  const dispatched = await resumeUndispatchedEvents(s, new Date(now - STALE_EVENT_MS));
  const staleDelivery = new Date(now - pendingDeliveryStaleMs(config().PAYROLL_WEBHOOK_RETRY_DELAYS_S));
  const { resent: redelivered, abandoned } = await resumePendingDeliveries(s, staleDelivery, new Date(now));
  if (resumed + dispatched + redelivered + abandoned > 0)
    logger.warn('sweeper resumed work', { resumed, dispatched, redelivered, abandoned });
  return { resumed, dispatched, redelivered, abandoned };
};
