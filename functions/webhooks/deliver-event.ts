import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as z from 'zod';
import { systemDeps } from '../../shared/adapters/clock.js';
import { defaultTable } from '../../shared/adapters/dynamo.js';
import { fieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import { logger } from '../../shared/adapters/logger.js';
import { observe } from '../../shared/adapters/observability.js';
import { Queue, sqsClient } from '../../shared/adapters/queue.js';
import { config, required, webhookUrlPolicy } from '../../shared/config/env.js';
import { EventRepository } from '../../shared/data/event-repository.js';
import { WebhookRepository } from '../../shared/data/webhook-repository.js';
import { deliverEvent, retryDelay, type DeliveryServices } from '../../shared/use-cases/events.js';

const message = z.object({ organization_id: z.string(), event_id: z.string(), webhook_id: z.string() });
const processor = new BatchProcessor(EventType.SQS);

const table = defaultTable();
const queueUrl = required('WEBHOOK_QUEUE_URL');
/** Exported for the fault-injection tests, which crash the very repositories this handler uses. */
export const services: DeliveryServices = {
  events: new EventRepository(table),
  webhooks: new WebhookRepository(table),
  webhookQueue: new Queue(sqsClient(), queueUrl),
  deps: systemDeps,
  encryptor: fieldEncryptor('webhook-secret'),
  environment: webhookUrlPolicy(),
  retryDelaysSeconds: config().PAYROLL_WEBHOOK_RETRY_DELAYS_S,
};

async function setVisibility(record: SQSRecord, seconds: number): Promise<void> {
  await sqsClient().send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: queueUrl,
      ReceiptHandle: record.receiptHandle,
      VisibilityTimeout: seconds,
    }),
  );
}

class DeliveryFailed extends Error {}

/**
 * One delivery message. The attempts are counted in the delivery record, not by the queue's receives (deliverEvent):
 * a failed POST sets the message's visibility to the next retry delay and reports the record failed, so the message
 * comes back then; the third failed POST closes the delivery `failed` and the message is acknowledged, like one whose
 * delivery succeeded or was closed already. An internal fault (a throttled or conflicting write, a crash before the
 * POST) spends no attempt: the message is retried on the configured schedule, by its receive count, rather than after
 * the queue's whole visibility timeout; the queue's maxReceiveCount leaves room for those receives, and a message
 * that still outlives them goes to the dead-letter queue, its delivery left pending for the sweeper to re-send.
 */
async function handleRecord(record: SQSRecord): Promise<void> {
  const parsed = message.safeParse(JSON.parse(record.body));
  if (!parsed.success) {
    logger.error('unreadable delivery message', { message_id: record.messageId });
    return;
  }
  let outcome: Awaited<ReturnType<typeof deliverEvent>>;
  try {
    outcome = await deliverEvent(services, parsed.data);
  } catch (err) {
    // Best effort: if this fails too, the visibility timeout applies.
    const receives = Number(record.attributes.ApproximateReceiveCount ?? '1');
    await setVisibility(record, retryDelay(services.retryDelaysSeconds, receives)).catch(() => undefined);
    throw err;
  }
  if (outcome.kind === 'retry') {
    await setVisibility(record, outcome.delaySeconds);
    throw new DeliveryFailed(`delivery attempt failed; retrying in ${outcome.delaySeconds} s`);
  }
  if (outcome.kind === 'failed') {
    logger.warn('webhook delivery failed after its last attempt', {
      event_id: parsed.data.event_id,
      webhook_id: parsed.data.webhook_id,
      organization_id: parsed.data.organization_id,
    });
  }
}

/** Traced, and the deliveries it closed `failed` published as a business metric as each batch ends. */
export const handler = observe(
  async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
    processPartialResponse(event, handleRecord, processor, { context, throwOnFullBatchFailure: false }),
);
