import { Duration } from 'aws-cdk-lib';
import type { QUEUE_DEFINITIONS } from '../shared/data/table-definition.js';

type QueueName = keyof typeof QUEUE_DEFINITIONS;

/**
 * AWS's guidance for a queue a Lambda event source consumes: a visibility timeout of at least six times the
 * function's timeout. The event source holds a received batch while Lambda retries an invocation that was throttled
 * (or waits for a concurrency slot), so a message may stay received for several function timeouts; with less, it
 * reappears, and is processed twice at once, while an invocation may still be working on it.
 */
export const EVENT_SOURCE_VISIBILITY_FACTOR = 6;

/**
 * The timeout of the function that consumes each queue: the one number each queue's visibility timeout is derived
 * from (`queueVisibilityTimeout`), read by the stateful stack (the queues) and the workers stack (the functions).
 * - payroll, the processor: 5 minutes. One message is one step (start, a chunk of 1,000 employees, finalize); a
 *   25,000-employee run completes in about a minute end to end, each step in seconds, so 5 minutes leaves several
 *   times the slowest step, and keeps a failed message's retry (one visibility timeout, 30 minutes) and a poison
 *   run's end (5 receives) within hours, not a working day.
 * - webhooks, the deliverer: 30 s (webhook-deliverer.ts says why). A failed POST's retry is delayed by the handler
 *   itself (ChangeMessageVisibility), not by the queue's visibility timeout.
 */
export const CONSUMER_TIMEOUTS: Readonly<Record<QueueName, Duration>> = {
  payroll: Duration.minutes(5),
  webhooks: Duration.seconds(30),
};

/** The queue's visibility timeout: EVENT_SOURCE_VISIBILITY_FACTOR times its consumer's timeout. */
export function queueVisibilityTimeout(queue: QueueName): Duration {
  return Duration.seconds(CONSUMER_TIMEOUTS[queue].toSeconds() * EVENT_SOURCE_VISIBILITY_FACTOR);
}

/** Throws unless a queue hiding messages for `visibility` may feed a function that runs for up to `timeout`. */
export function checkConsumerFits(what: string, visibility: Duration, timeout: Duration): void {
  if (visibility.toSeconds() < EVENT_SOURCE_VISIBILITY_FACTOR * timeout.toSeconds()) {
    throw new Error(
      `${what}: the queue's visibility timeout (${visibility.toSeconds()} s) must be at least ${EVENT_SOURCE_VISIBILITY_FACTOR} times the function's timeout (${timeout.toSeconds()} s)`,
    );
  }
}
