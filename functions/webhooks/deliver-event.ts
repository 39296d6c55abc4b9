import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as z from 'zod';
import { systemDeps } from '../../shared/adapters/clock.js';
import { defaultTable } from '../../shared/adapters/dynamo.js';
import { fieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import { logger } from '../../shared/adapters/logger.js';
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

async function handleRecord(record: SQSRecord): Promise<void> {
  const parsed = message.safeParse(JSON.parse(record.body));
  if (!parsed.success) {
    logger.error('unreadable delivery message', { message_id: record.messageId });
    return;
  }
  const receives = Number(record.attributes.ApproximateReceiveCount ?? '1');
  let outcome: Awaited<ReturnType<typeof deliverEvent>>;
  try {
    outcome = await deliverEvent(services, parsed.data, receives);
  } catch (err) {
    // An internal fault (a throttled or conflicting write) before the last attempt: retry on the configured
    // schedule, not after the queue's whole visibility timeout. Best effort: if this fails too, the timeout applies.
    await setVisibility(record, retryDelay(services.retryDelaysSeconds, receives)).catch(() => undefined);
    throw err;
  }
  if (outcome.kind === 'retry') {
    await setVisibility(record, outcome.delaySeconds);
    throw new DeliveryFailed(`attempt ${receives} failed; retrying in ${outcome.delaySeconds} s`);
  }
  if (outcome.kind === 'failed') {
    // The third failure: the delivery is recorded failed; the message goes to the dead-letter queue on its next receive.
    await setVisibility(record, 0);
    throw new DeliveryFailed(`attempt ${receives} failed; delivery failed`);
  }
}

export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
  processPartialResponse(event, handleRecord, processor, { context, throwOnFullBatchFailure: false });
