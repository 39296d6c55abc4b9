import { systemDeps } from '../../shared/adapters/clock.js';
import { defaultTable } from '../../shared/adapters/dynamo.js';
import { logger } from '../../shared/adapters/logger.js';
import { Queue, sqsClient } from '../../shared/adapters/queue.js';
import { config, required } from '../../shared/config/env.js';
import { EventRepository } from '../../shared/data/event-repository.js';
import { PayrollRepository } from '../../shared/data/payroll-repository.js';
import { WebhookRepository } from '../../shared/data/webhook-repository.js';
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
const table = defaultTable();
const payrolls = new PayrollRepository(table);
const payrollQueue = new Queue(sqsClient(), required('PAYROLL_QUEUE_URL'));
const events = {
  events: new EventRepository(table),
  webhooks: new WebhookRepository(table),
  webhookQueue: new Queue(sqsClient(), required('WEBHOOK_QUEUE_URL')),
  deps: systemDeps,
};

const STALE_RUN_MS = 15 * 60_000;
const STALE_EVENT_MS = 60_000;

export const handler = async (): Promise<{
  resumed: number;
  dispatched: number;
  redelivered: number;
  abandoned: number;
}> => {
  const now = Date.now();
  const resumed = await resumeUnfinishedRuns({ payrolls, queue: payrollQueue }, new Date(now - STALE_RUN_MS));
  const dispatched = await resumeUndispatchedEvents(events, new Date(now - STALE_EVENT_MS));
  const staleDelivery = new Date(now - pendingDeliveryStaleMs(config().PAYROLL_WEBHOOK_RETRY_DELAYS_S));
  const { resent: redelivered, abandoned } = await resumePendingDeliveries(events, staleDelivery, new Date(now));
  if (resumed + dispatched + redelivered + abandoned > 0)
    logger.warn('sweeper resumed work', { resumed, dispatched, redelivered, abandoned });
  return { resumed, dispatched, redelivered, abandoned };
};
