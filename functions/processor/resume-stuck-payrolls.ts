import { defaultTable } from '../../shared/adapters/dynamo.js';
import { logger } from '../../shared/adapters/logger.js';
import { observe } from '../../shared/adapters/observability.js';
import { Queue, sqsClient } from '../../shared/adapters/queue.js';
import { config, required } from '../../shared/config/env.js';
import { PayrollRepository } from '../../shared/data/payroll-repository.js';
import {
  eventServicesOver,
  pendingDeliveryStaleMs,
  resumePendingDeliveries,
  resumeUndispatchedEvents,
} from '../../shared/use-cases/events.js';
import { resumeUnfinishedRuns } from '../../shared/use-cases/process-payroll.js';

const table = defaultTable();
const runs = { payrolls: new PayrollRepository(table), queue: new Queue(sqsClient(), required('PAYROLL_QUEUE_URL')) };
const events = eventServicesOver(table);

const STALE_RUN_MS = 15 * 60_000;
const STALE_EVENT_MS = 60_000;

/** What is older than these is taken for lost: runs untouched, events not fanned out, deliveries still pending. */
export interface SweepCutoffs {
  runs: Date;
  events: Date;
  deliveries: Date;
}

/**
 * Resumes what was left unfinished: runs get their start message again, events still in the outbox are fanned out,
 * pending deliveries are sent again (or abandoned past their last attempt). All are idempotent. The local stack
 * calls it at start with every cutoff at `now`, as its queue engine keeps messages in memory only.
 */
export async function sweep(cutoffs: SweepCutoffs, now: Date) {
  const resumed = await resumeUnfinishedRuns(runs, cutoffs.runs);
  const dispatched = await resumeUndispatchedEvents(events, cutoffs.events);
  const { resent: redelivered, abandoned } = await resumePendingDeliveries(events, cutoffs.deliveries, now);
  if (resumed + dispatched + redelivered + abandoned > 0)
    logger.warn('sweeper resumed work', { resumed, dispatched, redelivered, abandoned });
  return { resumed, dispatched, redelivered, abandoned };
}

/**
 * The sweeper, run on a schedule: runs untouched for 15 minutes, events still in the outbox after a minute (their
 * fan-out was interrupted), and deliveries left pending long past their last retry delay (their message was lost).
 */
export const handler = observe(async () => {
  const now = Date.now();
  return sweep(
    {
      runs: new Date(now - STALE_RUN_MS),
      events: new Date(now - STALE_EVENT_MS),
      deliveries: new Date(now - pendingDeliveryStaleMs(config().PAYROLL_WEBHOOK_RETRY_DELAYS_S)),
    },
    new Date(now),
  );
});
