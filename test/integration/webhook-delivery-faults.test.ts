import { randomBytes } from 'node:crypto';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  type Message,
} from '@aws-sdk/client-sqs';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { defaultTable } from '../../shared/adapters/dynamo.js';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { systemDeps } from '../../shared/adapters/clock.js';
import { fieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import { sqsClient } from '../../shared/adapters/queue.js';
import { resetConfigForTests } from '../../shared/config/env.js';
import type { NewEvent } from '../../shared/data/event-repository.js';
import {
  dispatchQuietly,
  MAX_DELIVERY_SWEEPS,
  pendingDeliveryStaleMs,
  resumePendingDeliveries,
  resumeUndispatchedEvents,
} from '../../shared/use-cases/events.js';
import { createWebhook } from '../../shared/use-cases/webhooks.js';
import type { DeliveryServices } from '../../shared/use-cases/events.js';
import { lambdaContext } from '../support/api-event.js';
import { createTestQueues, createTestTable, engineEnvironment, testSqsClient } from '../support/engines.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * The webhook worker killed at every step, then handed the same SQS message again, as SQS does once the
 * visibility timeout runs out. Everything is real except the crash: the deliver-event Lambda handler, its
 * repositories on DynamoDB Local, the webhook queue and its DLQ on fauxqs (receive counts, redrive after
 * QUEUE_DEFINITIONS.webhooks.maxReceiveCount receives), the signed HTTP POST to a local receiver. A crash is an exception thrown right before or right after
 * one step's real effect, by wrapping the dependency that performs it (as test/integration/payroll-pipeline.test.ts
 * does for the processor).
 *
 * Per event and endpoint, whatever the crash: the receiver got the event at least once, every copy carries the
 * event id as `webhook-id` and a signature that verifies; there is one delivery record, closed once (`succeeded`,
 * or `failed` after exactly three recorded attempts, a crash costing none), its attempts agree with what the
 * receiver saw; nothing stays pending or undispatched, nothing is dead-lettered; the endpoint's failure count moves
 * once per failed event and is reset by a success.
 */

// Before any module builds its logger: the injected crashes are logged as warnings otherwise.
vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});
// postWebhook is a module function, not a method: route it through an object the crash helper can wrap.
const http = vi.hoisted(() => ({ postWebhook: undefined as unknown as (...args: unknown[]) => Promise<unknown> }));
vi.mock('../../shared/adapters/webhook-url.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../shared/adapters/webhook-url.js')>();
  http.postWebhook = actual.postWebhook as (...args: unknown[]) => Promise<unknown>;
  return { ...actual, postWebhook: (...args: unknown[]) => http.postWebhook(...args) };
});

/** The retry delays the handler sets (distinct, so a crash can target one); the driver below lets time pass at once. */
const FIRST_RETRY_S = 7;
const SECOND_RETRY_S = 11;
const EVENT_TYPES = ['payroll.submitted', 'payroll.processing', 'payroll.completed'] as const;

let queues: Awaited<ReturnType<typeof createTestQueues>>;
let s: DeliveryServices;
let handler: (event: SQSEvent, context: typeof lambdaContext) => Promise<SQSBatchResponse>;
const restores: (() => void)[] = [];
const figures = {
  cases: 0,
  deliveries: 0,
  posts: 0,
  acceptedAgain: 0,
  unrecorded: 0,
  receives: 0,
  redeliveries: 0,
  deadLettered: 0,
};

beforeAll(async () => {
  const [table, q] = await Promise.all([createTestTable('webhook-faults'), createTestQueues()]);
  queues = q;
  Object.assign(process.env, engineEnvironment(), {
    TABLE_NAME: table.tableName,
    WEBHOOK_QUEUE_URL: queues.webhooks,
    PAYROLL_QUEUE_URL: queues.payroll,
    PAYROLL_LOCAL_MASTER_KEY: randomBytes(32).toString('base64'),
    // Loopback receivers are allowed only to a sandbox local stack (webhookUrlPolicy), as `npm start` runs it.
    PAYROLL_ENVIRONMENT: 'sandbox',
    PAYROLL_LOCAL_STACK: 'true',
    PAYROLL_WEBHOOK_RETRY_DELAYS_S: `${FIRST_RETRY_S},${SECOND_RETRY_S}`,
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  });
  resetConfigForTests();
  const worker = await import('../../functions/webhooks/deliver-event.js');
  handler = worker.handler as typeof handler;
  // The handler's own repositories and queue: the crashes are injected into what it calls.
  s = worker.services;
});

afterEach(() => {
  for (const restore of restores.splice(0).reverse()) restore();
});

afterAll(() => {
  // The figures RELIABILITY.md quotes.
  console.info(`webhook faults: ${JSON.stringify(figures)}`);
});

/** Makes `method` crash once, right before or right after its real effect, on the first call `when` accepts. */
function crash<T extends object>(
  target: T,
  method: keyof T,
  moment: 'before' | 'after',
  when: (...args: any[]) => boolean = () => true,
) {
  const previous = target[method];
  const original = (previous as (...a: unknown[]) => Promise<unknown>).bind(target);
  let fired = false;
  (target as Record<keyof T, unknown>)[method] = async (...args: unknown[]) => {
    const hit = !fired && when(...args);
    if (hit) fired = true;
    if (hit && moment === 'before') throw new Error(`injected crash before ${String(method)}`);
    const result = await original(...args);
    if (hit) throw new Error(`injected crash after ${String(method)}`);
    return result;
  };
  restores.push(() => {
    (target as Record<keyof T, unknown>)[method] = previous;
    expect(fired, `the crash ${moment} ${String(method)} fired`).toBe(true);
  });
}

/** Calls through, and counts what was actually done (installed before a crash wrapper, so it sees the real effect). */
function count<T extends object>(target: T, method: keyof T, seen: unknown[][]) {
  const previous = target[method];
  const original = (previous as (...a: unknown[]) => Promise<unknown>).bind(target);
  (target as Record<keyof T, unknown>)[method] = async (...args: unknown[]) => {
    const result = await original(...args);
    seen.push(args);
    return result;
  };
  restores.push(() => ((target as Record<keyof T, unknown>)[method] = previous));
}

type Behaviour = 'healthy' | 'fails-first' | 'always-fails';

interface Endpoint {
  id: string;
  secret: string;
  behaviour: Behaviour;
  startFailures: number;
  receiver: Awaited<ReturnType<typeof startReceiver>>;
}

/**
 * An organization with two endpoints and three events in the outbox (written as the processor writes them, in a
 * transaction). Endpoint 0 is healthy; endpoint 1 behaves as asked: healthy, failing each event's first attempt, or
 * always failing. Each starts with 2 consecutive failed events (so a success's reset is visible), or 3 if it always
 * fails (so the second of its three failed events pauses it: 5 in a row).
 */
async function world(second: Behaviour) {
  const orgId = systemDeps.newId('org');
  const endpoints: Endpoint[] = [];
  for (const behaviour of ['healthy', second] as const) {
    const firstSeen = new Set<string>();
    const receiver = await startReceiver((r) => {
      if (behaviour === 'always-fails') return 500;
      const id = String(r.headers['webhook-id']);
      if (behaviour === 'fails-first' && !firstSeen.has(id)) {
        firstSeen.add(id);
        return 503;
      }
      return 200;
    });
    const { record, secret } = await createWebhook(
      { webhooks: s.webhooks, encryptor: fieldEncryptor('webhook-secret'), deps: systemDeps, environment: 'sandbox' },
      orgId,
      { url: receiver.url },
    );
    const startFailures = behaviour === 'always-fails' ? 3 : 2;
    await s.webhooks.replace(record, { ...record, consecutive_failures: startFailures, version: record.version + 1 });
    endpoints.push({ id: record.webhook_id, secret, behaviour, startFailures, receiver });
  }
  restores.push(() => endpoints.forEach((e) => void e.receiver.close()));
  const payrollId = systemDeps.newId('pay');
  const events: NewEvent[] = EVENT_TYPES.map((type) => ({
    event_id: systemDeps.newId('evt'),
    organization_id: orgId,
    type,
    payroll_id: payrollId,
    data: { payroll_id: payrollId, status: type.split('.')[1] },
    created_at: systemDeps.now().toISOString(),
  }));
  await defaultTable().doc.send(new TransactWriteCommand({ TransactItems: s.events.items(events) }));
  return { orgId, endpoints, events };
}
type World = Awaited<ReturnType<typeof world>>;

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

/**
 * Plays SQS and the Lambda event source: receives batches with their receive counts, runs the real handler,
 * deletes what succeeded, and hands every failed message back at once (its visibility timeout, or the retry
 * delay the handler set, elapsing), until the queue is empty. After maxReceiveCount receives the queue itself moves
 * a message to the DLQ. Returns the messages dead-lettered, taken off the DLQ.
 */
async function deliverAll(): Promise<string[]> {
  const sqs = testSqsClient();
  let empty = 0;
  for (let round = 0; round < 100; round++) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queues.webhooks,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) {
      if (++empty >= 2) return drainDlq();
      continue;
    }
    empty = 0;
    figures.receives += messages.length;
    const response = await handler({ Records: messages.map(toRecord) }, lambdaContext);
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    await Promise.all(
      messages.map((m) => {
        if (!failed.has(m.MessageId!))
          return sqs.send(new DeleteMessageCommand({ QueueUrl: queues.webhooks, ReceiptHandle: m.ReceiptHandle! }));
        figures.redeliveries++;
        return sqs
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
      }),
    );
  }
  throw new Error('the webhook queue did not drain in 100 rounds');
}

async function drainDlq(): Promise<string[]> {
  const sqs = testSqsClient();
  const bodies: string[] = [];
  for (;;) {
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queues.webhooks_dlq, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    if (!out.Messages?.length) return bodies;
    for (const m of out.Messages) {
      bodies.push(m.Body!);
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queues.webhooks_dlq, ReceiptHandle: m.ReceiptHandle! }));
    }
  }
}

/** The deliveries of this world the sweeper would see as pending, whatever their age. */
const pendingOf = async (w: { orgId: string }) =>
  (await s.events.listStalePendingDeliveries(new Date(Date.now() + 3_600_000).toISOString(), 1000)).filter(
    (d) => d.organization_id === w.orgId,
  );

/** The sweeper's fan-out of events left in the outbox, as it runs once they are a minute old. */
async function sweep(): Promise<number> {
  return resumeUndispatchedEvents(s, new Date(Date.now() + 1000));
}

interface Expectation {
  /**
   * POSTs the receiver saw whose attempt was never recorded: a crash between the POST and its record, or a duplicate
   * message racing its twin (the loser finds the delivery closed and records nothing). Default 0.
   */
  unrecorded?: number | 'any';
  /** Exactly one POST per event and endpoint (no re-delivery reached the network twice). */
  exactlyOnce?: boolean;
}

/** Everything a finished delivery must be, however many times its steps ran. */
async function expectDelivered(w: World, dead: string[], expectation: Expectation = {}) {
  let unrecorded = 0;
  for (const e of w.events) {
    const record = (await s.events.get(w.orgId, e.event_id))!;
    expect(record.pending_endpoints, 'nothing left pending').toBeUndefined();
    const deliveries = await s.events.deliveries(w.orgId, e.event_id);
    expect(deliveries.map((d) => d.webhook_id).sort(), 'one delivery record per endpoint').toEqual(
      w.endpoints.map((p) => p.id).sort(),
    );
    for (const p of w.endpoints) {
      const copies = p.receiver.received.filter((r) => r.headers['webhook-id'] === e.event_id);
      expect(copies.length, `${e.type} reached ${p.behaviour} endpoint`).toBeGreaterThanOrEqual(1);
      if (expectation.exactlyOnce) expect(copies).toHaveLength(1);
      const verifier = new Webhook(p.secret);
      for (const c of copies) {
        const payload = verifier.verify(c.body, c.headers as Record<string, string>) as { id: string; type: string };
        expect(payload).toMatchObject({ id: e.event_id, type: e.type });
        expect(c.body).toBe(copies[0]!.body);
      }
      const d = deliveries.find((x) => x.webhook_id === p.id)!;
      const ok = d.attempts.filter((a) => a.status_code !== null && a.status_code < 300);
      const posted = d.attempts.filter((a) => a.status_code !== null);
      if (p.behaviour === 'always-fails') {
        expect(d.status).toBe('failed');
        expect(ok).toHaveLength(0);
        // Three POSTs counted, whatever crashed in between: a crash spends no attempt.
        expect(d.attempts.map((a) => a.status_code)).toEqual([500, 500, 500]);
        expect(d.attempt_count).toBe(3);
      } else {
        expect(d.status).toBe('succeeded');
        // Closed once: one successful attempt, and it is the last one.
        expect(ok).toHaveLength(1);
        expect(d.attempts.at(-1)).toBe(ok[0]);
      }
      expect(record.deliveries[p.id]).toBe(d.status);
      expect(posted.length).toBeLessThanOrEqual(copies.length);
      unrecorded += copies.length - posted.length;
      figures.deliveries++;
      figures.posts += copies.length;
      // Copies the endpoint accepted after the first it accepted (the fails-first endpoint refuses one per event).
      if (p.behaviour !== 'always-fails')
        figures.acceptedAgain += copies.length - (p.behaviour === 'fails-first' ? 2 : 1);
    }
  }
  if (expectation.unrecorded !== 'any')
    expect(unrecorded, 'POSTs without their attempt record').toBe(expectation.unrecorded ?? 0);
  figures.unrecorded += unrecorded;
  // No message ends in the DLQ: a delivery closed `failed` after its third attempt acknowledges its message, and a
  // crash costs a receive of the queue's maxReceiveCount, not an attempt.
  const ours = dead
    .map((b) => JSON.parse(b) as { organization_id: string; event_id: string; webhook_id: string })
    .filter((m) => m.organization_id === w.orgId);
  expect(ours).toEqual([]);
  figures.deadLettered += ours.length;
  // The endpoint's bookkeeping moved exactly once per event: reset by a success, +1 per failed event.
  for (const p of w.endpoints) {
    const hook = (await s.webhooks.get(w.orgId, p.id))!;
    if (p.behaviour === 'always-fails') {
      expect(hook.consecutive_failures).toBe(p.startFailures + w.events.length);
      expect(hook.status).toBe('unreliable');
    } else {
      expect(hook.consecutive_failures).toBe(0);
      expect(hook.status).toBe('active');
    }
  }
  expect(await s.events.listUndispatched(new Date(Date.now() + 60_000).toISOString(), 100)).toEqual([]);
  expect(await pendingOf(w), 'no pending-delivery marker left').toEqual([]);
  figures.cases++;
}

const isRetryDelay = (seconds: number) => (command: unknown) =>
  command instanceof ChangeMessageVisibilityCommand && command.input.VisibilityTimeout === seconds;

type Fault = [name: string, second: Behaviour, inject: (w: World) => void, expectation?: Expectation];

/** Each step of one delivery (functions/webhooks/deliver-event.ts → deliverEvent), crashed before and after. */
const deliveryFaults: Fault[] = [
  // Healthy endpoints: the crash is on a first receive, the re-delivered message completes the delivery.
  ['before loading the delivery', 'healthy', () => crash(s.events, 'getDelivery', 'before')],
  ['after loading endpoint, delivery and event', 'healthy', () => crash(s.events, 'get', 'after')],
  [
    'before signing (unwrapping the secret)',
    'healthy',
    () => crash(fieldEncryptor('webhook-secret'), 'decrypt', 'before'),
  ],
  ['after signing', 'healthy', () => crash(fieldEncryptor('webhook-secret'), 'decrypt', 'after')],
  ['before the HTTP POST', 'healthy', () => crash(http, 'postWebhook', 'before')],
  ['after the HTTP POST, before its record', 'healthy', () => crash(http, 'postWebhook', 'after'), { unrecorded: 1 }],
  [
    'before closing the delivery succeeded',
    'healthy',
    () => crash(s.events, 'recordAttempt', 'before', (...a) => a[4] === 'succeeded'),
    { unrecorded: 1 },
  ],
  [
    'after closing the delivery succeeded',
    'healthy',
    () => crash(s.events, 'recordAttempt', 'after', (...a) => a[4] === 'succeeded'),
  ],
  // An endpoint failing each event's first attempt: the retry path.
  [
    'before recording a failed attempt',
    'fails-first',
    () => crash(s.events, 'recordAttempt', 'before', (...a) => a[4] === null),
    { unrecorded: 1 },
  ],
  [
    'after recording a failed attempt',
    'fails-first',
    () => crash(s.events, 'recordAttempt', 'after', (...a) => a[4] === null),
  ],
  [
    'before setting the retry delay',
    'fails-first',
    () => crash(sqsClient(), 'send', 'before', isRetryDelay(FIRST_RETRY_S)),
  ],
  [
    'after setting the retry delay',
    'fails-first',
    () => crash(sqsClient(), 'send', 'after', isRetryDelay(FIRST_RETRY_S)),
  ],
  // An endpoint that always fails: the third attempt closes the delivery failed and acknowledges the message.
  [
    'before closing the delivery failed (last attempt)',
    'always-fails',
    () => crash(s.events, 'recordAttempt', 'before', (...a) => a[4] === 'failed'),
    { unrecorded: 1 },
  ],
  [
    'after closing the delivery failed (last attempt)',
    'always-fails',
    () => crash(s.events, 'recordAttempt', 'after', (...a) => a[4] === 'failed'),
  ],
  [
    'before pausing the endpoint (unreliable)',
    'always-fails',
    () => crash(s.webhooks, 'pauseIfUnreliable', 'before', () => true),
  ],
  [
    'after pausing the endpoint (unreliable)',
    'always-fails',
    () => crash(s.webhooks, 'pauseIfUnreliable', 'after', () => true),
  ],
  [
    'before setting the last retry delay',
    'always-fails',
    () => crash(sqsClient(), 'send', 'before', isRetryDelay(SECOND_RETRY_S)),
  ],
  [
    'after setting the last retry delay',
    'always-fails',
    () => crash(sqsClient(), 'send', 'after', isRetryDelay(SECOND_RETRY_S)),
  ],
];

describe('the webhook worker, crashed at every step and re-delivered', () => {
  it('delivers every event once to every endpoint when nothing crashes', async () => {
    const w = await world('healthy');
    await dispatchQuietly(s, w.events);
    await expectDelivered(w, await deliverAll(), { exactlyOnce: true });
  });

  it('retries after an internal fault on the configured schedule, not after the queue visibility timeout', async () => {
    const w = await world('healthy');
    const sent: unknown[][] = [];
    count(sqsClient(), 'send', sent);
    crash(s.events, 'get', 'before');
    await dispatchQuietly(s, w.events);
    await expectDelivered(w, await deliverAll());
    // Healthy endpoints never ask for a retry: the only delay set is the crashed attempt's, the first retry delay.
    expect(sent.map(([c]) => c).filter(isRetryDelay(FIRST_RETRY_S))).toHaveLength(1);
  });

  it('retries a failing endpoint three times, then closes the delivery failed and acknowledges the message', async () => {
    const w = await world('always-fails');
    const sent: unknown[][] = [];
    count(sqsClient(), 'send', sent);
    await dispatchQuietly(s, w.events);
    await expectDelivered(w, await deliverAll());
    for (const e of w.events) {
      const d = (await s.events.getDelivery(w.orgId, e.event_id, w.endpoints[1]!.id))!;
      expect(d.attempts.map((a) => a.status_code)).toEqual([500, 500, 500]);
    }
    // Per event: the configured delay before the 2nd and the 3rd attempt; none after the third, which acknowledges.
    const delays = sent
      .map(([c]) => c)
      .filter((c) => c instanceof ChangeMessageVisibilityCommand)
      .map((c) => c.input.VisibilityTimeout);
    expect(delays.sort((a, b) => a! - b!)).toEqual([
      FIRST_RETRY_S,
      FIRST_RETRY_S,
      FIRST_RETRY_S,
      SECOND_RETRY_S,
      SECOND_RETRY_S,
      SECOND_RETRY_S,
    ]);
  });

  it.each(deliveryFaults)('stays exactly-once with a crash %s', async (_name, second, inject, expectation) => {
    const w = await world(second);
    await dispatchQuietly(s, w.events);
    inject(w);
    await expectDelivered(w, await deliverAll(), expectation);
  });
});

/** Each step of the fan-out (dispatchEvents: outbox → one delivery record and one message per endpoint), crashed. */
const dispatchFaults: [name: string, inject: (w: World) => void][] = [
  ['before reading the endpoints', () => crash(s.webhooks, 'all', 'before')],
  ['before opening the first delivery', () => crash(s.events, 'openDelivery', 'before')],
  ['after opening the first delivery (mid fan-out)', () => crash(s.events, 'openDelivery', 'after')],
  [
    'before opening the second delivery (mid fan-out)',
    (w) => crash(s.events, 'openDelivery', 'before', (_e, hook) => hook.webhook_id === w.endpoints[1]!.id),
  ],
  [
    'after opening every delivery',
    (w) => crash(s.events, 'openDelivery', 'after', (_e, hook) => hook.webhook_id === w.endpoints[1]!.id),
  ],
  ['before sending the delivery messages', () => crash(s.webhookQueue, 'sendAll', 'before')],
  ['after sending the delivery messages', () => crash(s.webhookQueue, 'sendAll', 'after')],
  ['before clearing the outbox marker', () => crash(s.events, 'markDispatched', 'before')],
  ['after clearing the outbox marker', () => crash(s.events, 'markDispatched', 'after')],
];

/** The delivery messages sent, per event and endpoint, for one organization. */
function messagesPer(w: World, sent: unknown[][]): Map<string, number> {
  const per = new Map<string, number>();
  for (const [batch] of sent) {
    for (const m of batch as { organization_id: string; event_id: string; webhook_id: string }[]) {
      if (m.organization_id !== w.orgId) continue;
      const key = `${m.event_id} ${m.webhook_id}`;
      per.set(key, (per.get(key) ?? 0) + 1);
    }
  }
  return per;
}

const everyPair = (w: World) => w.events.flatMap((e) => w.endpoints.map((p) => `${e.event_id} ${p.id}`)).sort();

describe('the fan-out, crashed at every step and resumed by the sweeper', () => {
  it.each(dispatchFaults)(
    'sends one message and opens one delivery per endpoint with a crash %s',
    async (_name, inject) => {
      const w = await world('healthy');
      const sent: unknown[][] = [];
      count(s.webhookQueue, 'sendAll', sent);
      inject(w);
      // As the processor calls it after its transaction: a failure is logged and left to the sweeper.
      await dispatchQuietly(s, w.events);
      const dead = await deliverAll();
      // The sweeper runs a minute later, by which time the messages sent before the crash have been delivered.
      await sweep();
      dead.push(...(await deliverAll()));
      await expectDelivered(w, dead, { exactlyOnce: true });
      const per = messagesPer(w, sent);
      expect([...per.keys()].sort()).toEqual(everyPair(w));
      expect(
        [...per.values()].every((n) => n === 1),
        JSON.stringify([...per]),
      ).toBe(true);
    },
  );

  it('stays at-least-once, closing each delivery once, when the sweeper fans out again before the first messages are consumed', async () => {
    const w = await world('healthy');
    const sent: unknown[][] = [];
    count(s.webhookQueue, 'sendAll', sent);
    crash(s.webhookQueue, 'sendAll', 'after');
    await dispatchQuietly(s, w.events);
    await sweep();
    await expectDelivered(w, await deliverAll(), { unrecorded: 'any' });
    // The first event's deliveries were still pending at the sweep: their message is sent again (at least once).
    const per = messagesPer(w, sent);
    expect([...per.keys()].sort()).toEqual(everyPair(w));
    expect(Math.max(...per.values())).toBe(2);
  });

  it('stays exactly-once per delivery record when every delivery message is sent twice', async () => {
    const w = await world('fails-first');
    const queue = s.webhookQueue;
    const sendAll = queue.sendAll;
    queue.sendAll = async (messages) => {
      await sendAll.call(queue, messages);
      await sendAll.call(queue, messages);
    };
    restores.push(() => (queue.sendAll = sendAll));
    await dispatchQuietly(s, w.events);
    await expectDelivered(w, await deliverAll(), { unrecorded: 'any' });
  });
});

/**
 * A worker killed outright (SIGKILL, a timeout: no exception to catch) on a message's last receive leaves its
 * delivery pending while SQS dead-letters the message; the local stack's in-memory queue loses messages across a
 * restart the same way. The sweeper finds deliveries pending long past their last activity and sends them again.
 */
describe('deliveries whose message was lost, resumed by the sweeper', () => {
  /** Takes every message off the webhook queue unprocessed: what a killed worker's dead-lettered message leaves. */
  async function loseMessages(): Promise<number> {
    const sqs = testSqsClient();
    let lost = 0;
    for (;;) {
      const out = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queues.webhooks, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
      );
      if (!out.Messages?.length) return lost;
      for (const m of out.Messages)
        await sqs.send(new DeleteMessageCommand({ QueueUrl: queues.webhooks, ReceiptHandle: m.ReceiptHandle! }));
      lost += out.Messages.length;
    }
  }
  const later = (ms: number) => new Date(Date.now() + ms);
  const STALE_MS = pendingDeliveryStaleMs([FIRST_RETRY_S, SECOND_RETRY_S]);

  it('leaves a delivery waiting for its next attempt alone', async () => {
    const w = await world('fails-first');
    await dispatchQuietly(s, w.events);
    expect(await pendingOf(w)).toHaveLength(w.events.length * w.endpoints.length);
    // Idle for less than the longest retry delay plus the margin: not stale.
    expect(await resumePendingDeliveries(s, new Date(Date.now() - STALE_MS), new Date())).toEqual({
      resent: 0,
      abandoned: 0,
    });
    await expectDelivered(w, await deliverAll());
  });

  it('sends every lost delivery again, once, and each completes with its stable webhook-id', async () => {
    const w = await world('fails-first');
    await dispatchQuietly(s, w.events);
    expect(await loseMessages()).toBe(w.events.length * w.endpoints.length);
    const { resent, abandoned } = await resumePendingDeliveries(s, later(STALE_MS), later(STALE_MS));
    expect(resent).toBeGreaterThanOrEqual(w.events.length * w.endpoints.length);
    expect(abandoned).toBe(0);
    await expectDelivered(w, await deliverAll());
    for (const p of w.endpoints)
      expect(
        p.receiver.received.filter((r) => w.events.some((e) => e.event_id === r.headers['webhook-id'])).length,
      ).toBe(p.behaviour === 'fails-first' ? 2 * w.events.length : w.events.length);
  });

  it(`closes a delivery no worker finishes after ${MAX_DELIVERY_SWEEPS} re-sends as failed, with the reason, instead of re-sending it forever`, async () => {
    const w = await world('healthy');
    // Disabled after the fan-out: the worker then sends nothing and leaves the delivery as it is.
    const hook = (await s.webhooks.get(w.orgId, w.endpoints[1]!.id))!;
    await dispatchQuietly(s, w.events);
    await s.webhooks.replace(hook, { ...hook, status: 'disabled', version: hook.version + 1 });
    for (let sweep = 1; sweep <= MAX_DELIVERY_SWEEPS; sweep++) {
      await deliverAll();
      const { resent } = await resumePendingDeliveries(s, later(sweep * STALE_MS), later(sweep * STALE_MS));
      expect(resent).toBeGreaterThanOrEqual(w.events.length);
    }
    await deliverAll();
    const last = await resumePendingDeliveries(s, later(10 * STALE_MS), later(10 * STALE_MS));
    expect(last.abandoned).toBeGreaterThanOrEqual(w.events.length);
    expect(await pendingOf(w)).toEqual([]);
    for (const e of w.events) {
      const d = (await s.events.deliveries(w.orgId, e.event_id)).find((x) => x.webhook_id === hook.webhook_id)!;
      expect(d.status).toBe('failed');
      expect(d.attempts.at(-1)!.error).toMatch(/^abandoned/);
      expect((await s.events.get(w.orgId, e.event_id))!.deliveries[hook.webhook_id]).toBe('failed');
    }
  });
});
