import { randomBytes } from 'node:crypto';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { systemDeps } from '../../shared/adapters/clock.js';
import { defaultTable } from '../../shared/adapters/dynamo.js';
import { fieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import { METRIC_NAMES } from '../../shared/adapters/metric-names.js';
import { businessMetrics } from '../../shared/adapters/observability.js';
import { resetConfigForTests } from '../../shared/config/env.js';
import { QUEUE_DEFINITIONS } from '../../shared/data/table-definition.js';
import { MAX_DELIVERY_ATTEMPTS, UNRELIABLE_AFTER_FAILED_EVENTS } from '../../shared/domain/events.js';
import {
  type DeliveryMessage,
  type DeliveryServices,
  dispatchQuietly,
  pendingDeliveryStaleMs,
  redeliverEvent,
  resumePendingDeliveries,
} from '../../shared/use-cases/events.js';
import { createWebhook } from '../../shared/use-cases/webhooks.js';
import { lambdaContext } from '../support/api-event.js';
import { createTestQueues, createTestTable, engineEnvironment, testSqsClient } from '../support/engines.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * Webhook delivery attempts are counted in the delivery record, one per POST actually made, not by the queue's
 * receives: a receive that never reaches the endpoint (a throttled invocation, a fault before the POST) spends no
 * attempt. The real deliver-event handler over DynamoDB Local and fauxqs, a real local receiver, and the queue's own
 * receive counts; the driver below plays the Lambda event source one receive at a time.
 */

vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});
// postWebhook is a module function: routed through an object a test can make crash before the POST.
const http = vi.hoisted(() => ({ postWebhook: undefined as unknown as (...args: unknown[]) => Promise<unknown> }));
vi.mock('../../shared/adapters/webhook-url.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../shared/adapters/webhook-url.js')>();
  http.postWebhook = actual.postWebhook as (...args: unknown[]) => Promise<unknown>;
  return { ...actual, postWebhook: (...args: unknown[]) => http.postWebhook(...args) };
});

const FIRST_RETRY_S = 7;
const SECOND_RETRY_S = 11;

let queues: Awaited<ReturnType<typeof createTestQueues>>;
let s: DeliveryServices;
let handler: (event: SQSEvent, context: typeof lambdaContext) => Promise<SQSBatchResponse>;
const restores: (() => void)[] = [];

beforeAll(async () => {
  const [table, q] = await Promise.all([createTestTable('webhook-attempts'), createTestQueues()]);
  queues = q;
  Object.assign(process.env, engineEnvironment(), {
    TABLE_NAME: table.tableName,
    WEBHOOK_QUEUE_URL: queues.webhooks,
    PAYROLL_QUEUE_URL: queues.payroll,
    PAYROLL_LOCAL_MASTER_KEY: randomBytes(32).toString('base64'),
    PAYROLL_ENVIRONMENT: 'sandbox',
    PAYROLL_LOCAL_STACK: 'true',
    PAYROLL_WEBHOOK_RETRY_DELAYS_S: `${FIRST_RETRY_S},${SECOND_RETRY_S}`,
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  });
  resetConfigForTests();
  const worker = await import('../../functions/webhooks/deliver-event.js');
  handler = worker.handler as typeof handler;
  s = worker.services;
});

afterEach(() => {
  for (const restore of restores.splice(0).reverse()) restore();
  vi.restoreAllMocks();
});

/** One organization, one endpoint answering `status` (per POST), one event in the outbox, fanned out. */
async function oneDelivery(status: (index: number) => number, startFailures = 0) {
  const orgId = systemDeps.newId('org');
  const receiver = await startReceiver((_r, i) => status(i));
  restores.push(() => void receiver.close());
  const { record } = await createWebhook(
    { webhooks: s.webhooks, encryptor: fieldEncryptor('webhook-secret'), deps: systemDeps, environment: 'sandbox' },
    orgId,
    { url: receiver.url },
  );
  if (startFailures > 0)
    await s.webhooks.replace(record, { ...record, consecutive_failures: startFailures, version: record.version + 1 });
  const event = {
    event_id: systemDeps.newId('evt'),
    organization_id: orgId,
    type: 'payroll.completed' as const,
    payroll_id: null,
    data: { status: 'completed' },
    created_at: systemDeps.now().toISOString(),
  };
  await defaultTable().doc.send(new TransactWriteCommand({ TransactItems: s.events.items([event]) }));
  await dispatchQuietly(s, [event]);
  const message: DeliveryMessage = { organization_id: orgId, event_id: event.event_id, webhook_id: record.webhook_id };
  const delivery = async () => (await s.events.getDelivery(orgId, event.event_id, record.webhook_id))!;
  return { orgId, event, webhookId: record.webhook_id, receiver, message, delivery };
}

function toRecord(m: Message): SQSRecord {
  return {
    messageId: m.MessageId!,
    receiptHandle: m.ReceiptHandle!,
    body: m.Body!,
    attributes: {
      ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
      SentTimestamp: m.Attributes?.SentTimestamp ?? '0',
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? '0',
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:webhook-delivery',
    awsRegion: 'us-east-1',
  };
}

/** Up to `max` messages of the webhook queue, received as the event source receives them (a receive counted). */
async function receive(max = 1): Promise<Message[]> {
  const out = await testSqsClient().send(
    new ReceiveMessageCommand({
      QueueUrl: queues.webhooks,
      MaxNumberOfMessages: max,
      WaitTimeSeconds: 1,
      MessageSystemAttributeNames: ['All'],
    }),
  );
  return out.Messages ?? [];
}

/** The message back on the queue at once, as after its visibility timeout or the retry delay the handler set. */
const release = (m: Message) =>
  testSqsClient()
    .send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queues.webhooks,
        ReceiptHandle: m.ReceiptHandle!,
        VisibilityTimeout: 0,
      }),
    )
    .catch((err: Error) => {
      if (err.name !== 'MessageNotInflight') throw err;
    });

/**
 * One invocation of the real handler on `messages`, settled as the event source settles it: what succeeded is
 * deleted, what failed comes back (at once here). Returns the ids of the failed records.
 */
async function invoke(messages: Message[]): Promise<Set<string>> {
  const response = await handler({ Records: messages.map(toRecord) }, lambdaContext);
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  await Promise.all(
    messages.map((m) =>
      failed.has(m.MessageId!)
        ? release(m)
        : testSqsClient().send(
            new DeleteMessageCommand({ QueueUrl: queues.webhooks, ReceiptHandle: m.ReceiptHandle! }),
          ),
    ),
  );
  return failed;
}

/** Receives and handles one message at a time until the queue is empty; the receive counts the handler saw. */
async function deliverOneByOne(): Promise<number[]> {
  const receives: number[] = [];
  for (let round = 0; round < 50; round++) {
    const [m] = await receive();
    if (!m) return receives;
    receives.push(Number(m.Attributes!.ApproximateReceiveCount));
    await invoke([m]);
  }
  throw new Error('the webhook queue did not drain in 50 receives');
}

async function queueEmpty(url: string): Promise<void> {
  const { Attributes } = await testSqsClient().send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  expect(Attributes).toMatchObject({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
}

const sendAgain = (m: DeliveryMessage) =>
  testSqsClient().send(new SendMessageCommand({ QueueUrl: queues.webhooks, MessageBody: JSON.stringify(m) }));

/** Makes the next POST throw before it is made (a fault on the way to the endpoint: no request leaves). */
function faultBeforeNextPost() {
  const original = http.postWebhook;
  let fired = false;
  http.postWebhook = async (...args: unknown[]) => {
    if (!fired) {
      fired = true;
      throw new Error('injected fault before the POST');
    }
    return original(...args);
  };
  restores.push(() => {
    http.postWebhook = original;
    expect(fired, 'the fault before the POST fired').toBe(true);
  });
}

const failedDeliveriesCounted = (spy: { mock: { calls: unknown[][] } }) =>
  spy.mock.calls.filter(([name]) => name === METRIC_NAMES.webhookDeliveriesFailed).length;

describe('webhook attempts, counted in the delivery record', () => {
  it('leaves the queue room for receives that make no attempt', () => {
    expect(QUEUE_DEFINITIONS.webhooks.maxReceiveCount).toBeGreaterThanOrEqual(5);
    expect(QUEUE_DEFINITIONS.webhooks.maxReceiveCount).toBeGreaterThan(MAX_DELIVERY_ATTEMPTS + 2);
  });

  it('makes three real attempts although the first two receives never reach the endpoint (a throttle, a fault before the POST)', async () => {
    const count = vi.spyOn(businessMetrics, 'count');
    const d = await oneDelivery(() => 500);
    // Receive 1: a throttled invocation. Lambda received the message but never ran the handler; it comes back.
    const [throttled] = await receive();
    expect(throttled!.Attributes!.ApproximateReceiveCount).toBe('1');
    await release(throttled!);
    // Receive 2: the handler faults before its POST (say KMS or DynamoDB refused a call): reported failed.
    faultBeforeNextPost();
    const [faulted] = await receive();
    expect(faulted!.Attributes!.ApproximateReceiveCount).toBe('2');
    expect(await invoke([faulted!])).toEqual(new Set([faulted!.MessageId]));
    expect(d.receiver.received).toHaveLength(0);
    expect((await d.delivery()).attempt_count ?? 0).toBe(0);

    // Receives 3, 4 and 5: the three attempts, the last of which closes the delivery and acknowledges the message.
    expect(await deliverOneByOne()).toEqual([3, 4, 5]);
    expect(d.receiver.received).toHaveLength(3);
    const delivery = await d.delivery();
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 3 });
    expect(delivery.attempts.map((a) => a.status_code)).toEqual([500, 500, 500]);
    expect((await s.events.get(d.orgId, d.event.event_id))!.deliveries[d.webhookId]).toBe('failed');
    // Acknowledged, not dead-lettered: the queue and its DLQ are empty.
    await queueEmpty(queues.webhooks);
    await queueEmpty(queues.webhooks_dlq);
    expect(failedDeliveriesCounted(count)).toBe(1);
  });

  it('acknowledges the message of the third failed attempt, and never POSTs a closed delivery again', async () => {
    const count = vi.spyOn(businessMetrics, 'count');
    const d = await oneDelivery(() => 500);
    for (const expected of [true, true, false]) {
      const [m] = await receive();
      // Failed (comes back after the retry delay) after the 1st and 2nd attempts; acknowledged after the 3rd.
      expect((await invoke([m!])).has(m!.MessageId!)).toBe(expected);
    }
    expect(d.receiver.received).toHaveLength(3);
    await queueEmpty(queues.webhooks);
    // A copy of the message (a duplicate, a redriven message) finds the delivery closed: acknowledged without a POST.
    await sendAgain(d.message);
    const [copy] = await receive();
    expect(await invoke([copy!])).toEqual(new Set());
    expect(d.receiver.received).toHaveLength(3);
    await queueEmpty(queues.webhooks);
    expect((await d.delivery()).attempts).toHaveLength(3);
    expect(failedDeliveriesCounted(count)).toBe(1);

    // The same for a delivery that succeeded.
    const ok = await oneDelivery(() => 200);
    expect(await deliverOneByOne()).toEqual([1]);
    await sendAgain(ok.message);
    expect(await deliverOneByOne()).toEqual([1]);
    expect(ok.receiver.received).toHaveLength(1);
    expect((await ok.delivery()).attempts).toHaveLength(1);
  });

  it('spends the three attempts once between two messages of one delivery', async () => {
    const count = vi.spyOn(businessMetrics, 'count');
    const d = await oneDelivery(() => 500);
    // A second message for the same delivery (a sweeper's re-send while the first was still queued).
    await sendAgain(d.message);
    await deliverOneByOne();
    // Not three per message: three in all, then both messages are acknowledged.
    expect(d.receiver.received).toHaveLength(3);
    expect(await d.delivery()).toMatchObject({ status: 'failed', attempt_count: 3 });
    await queueEmpty(queues.webhooks);
    expect(failedDeliveriesCounted(count)).toBe(1);
  });

  it('never counts one attempt twice when two messages of one delivery are handled at once', async () => {
    const d = await oneDelivery(() => 500);
    await sendAgain(d.message);
    for (let round = 0; round < 20; round++) {
      const messages = await receive(10);
      if (messages.length === 0) break;
      await invoke(messages);
    }
    const delivery = await d.delivery();
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 3 });
    expect(delivery.attempts).toHaveLength(3);
    // A POST that lost the race for its attempt number is not recorded: at most one per race, never a fourth attempt.
    expect(d.receiver.received.length).toBeGreaterThanOrEqual(3);
    expect(d.receiver.received.length).toBeLessThanOrEqual(4);
    await queueEmpty(queues.webhooks);
  });

  it('goes on counting when the sweeper re-sends a delivery whose message was lost', async () => {
    const d = await oneDelivery(() => 500);
    // Two attempts, then the message is lost (taken off the queue unprocessed).
    for (let i = 0; i < 2; i++) await invoke(await receive());
    const [lost] = await receive();
    await testSqsClient().send(
      new DeleteMessageCommand({ QueueUrl: queues.webhooks, ReceiptHandle: lost!.ReceiptHandle! }),
    );
    expect(await d.delivery()).toMatchObject({ status: 'pending', attempt_count: 2 });
    const later = new Date(Date.now() + pendingDeliveryStaleMs([FIRST_RETRY_S, SECOND_RETRY_S]) + 1000);
    const { resent } = await resumePendingDeliveries(s, later, later);
    expect(resent).toBeGreaterThanOrEqual(1);
    // The re-sent message is received for the first time, but it makes the delivery's third attempt, its last.
    await deliverOneByOne();
    expect(d.receiver.received).toHaveLength(3);
    expect(await d.delivery()).toMatchObject({ status: 'failed', attempt_count: 3 });
  });

  it('gives a redelivered event three fresh attempts, and shows every attempt', async () => {
    const d = await oneDelivery(() => 500);
    await deliverOneByOne();
    expect(await d.delivery()).toMatchObject({ status: 'failed', attempt_count: 3 });
    await redeliverEvent(s, d.orgId, d.event.event_id);
    expect(await d.delivery()).toMatchObject({ status: 'pending', attempt_count: 0 });
    await deliverOneByOne();
    expect(d.receiver.received).toHaveLength(6);
    const delivery = await d.delivery();
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 3 });
    expect(delivery.attempts.map((a) => a.status_code)).toEqual([500, 500, 500, 500, 500, 500]);
  });

  it('pauses the endpoint when the worker that closed its fifth failed event died before pausing it', async () => {
    const d = await oneDelivery(() => 500, UNRELIABLE_AFTER_FAILED_EVENTS - 1);
    const original = s.webhooks.pauseIfUnreliable;
    let fired = false;
    s.webhooks.pauseIfUnreliable = async (...args) => {
      if (!fired) {
        fired = true;
        throw new Error('injected crash before pausing the endpoint');
      }
      return original.apply(s.webhooks, args);
    };
    restores.push(() => {
      s.webhooks.pauseIfUnreliable = original;
      expect(fired).toBe(true);
    });
    await deliverOneByOne();
    expect(d.receiver.received).toHaveLength(3);
    expect(await d.delivery()).toMatchObject({ status: 'failed', attempt_count: 3 });
    const hook = (await s.webhooks.get(d.orgId, d.webhookId))!;
    expect(hook).toMatchObject({ status: 'unreliable', consecutive_failures: UNRELIABLE_AFTER_FAILED_EVENTS });
  });
});
