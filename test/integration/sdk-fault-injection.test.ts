import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  type Message,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { systemDeps } from '../../shared/adapters/clock.js';
import { documentClient } from '../../shared/adapters/dynamo.js';
import { parseControlTotals } from '../../shared/adapters/nacha.js';
import { assertBankRules, readNacha } from '../support/nacha-check.js';
import { defaultObjectStore, objectKeys } from '../../shared/adapters/object-store.js';
import { sqsClient } from '../../shared/adapters/queue.js';
import { resetConfigForTests } from '../../shared/config/env.js';
import { QUEUE_DEFINITIONS } from '../../shared/data/table-definition.js';
import { createOrganization } from '../../shared/use-cases/api-keys.js';
import { createEmployee } from '../../shared/use-cases/employees.js';
import type { ProcessorServices } from '../../shared/use-cases/process-payroll.js';
import { submitPayroll } from '../../shared/use-cases/submit-payroll.js';
import { lambdaContext } from '../support/api-event.js';
import {
  createTestBucket,
  createTestQueues,
  createTestTable,
  engineEnvironment,
  testSqsClient,
} from '../support/engines.js';
import { payrollBody, paystubItemsOf, runFile } from '../support/payroll-fixture.js';
import { PAYROLL_TRANSITIONS } from '../../shared/domain/payroll-lifecycle.js';

/** The repository's moves of two lifecycle events, as the executor passes them. */
const MOVES = {
  finish: { to: PAYROLL_TRANSITIONS.finish.to, from: PAYROLL_TRANSITIONS.finish.from },
  start: { to: PAYROLL_TRANSITIONS.start.to, from: PAYROLL_TRANSITIONS.start.from },
};

/**
 * DynamoDB throttling and S3 errors injected where the network would produce them, under the SDK's own retry.
 *
 * aws-sdk-client-mock replaces a client's `send`, so a fault it injects never reaches the SDK's retry middleware: a
 * test built on it would only prove that our code does not retry. Here the faults are HTTP answers returned by the
 * production clients' request handler (documentClient(), defaultObjectStore(), exactly as the handlers build them:
 * maxAttempts 5, the standard retry strategy), in the wire format of each service (DynamoDB's JSON `__type`, S3's
 * XML <Error>). Above the handler everything is production code: the SDK deserializes the answer into its real
 * exception (ProvisionedThroughputExceededException, SlowDown…), the retry middleware classifies it and sleeps; an
 * attempt the rule lets through reaches DynamoDB Local or fauxqs. The processor runs as its Lambda handler, over
 * the real payroll queue with its receive counts and DLQ.
 *
 * "With backoff", without wall-clock flakiness: the SDK's jitter (a random factor in [0, 1) on base × 2^retry) is
 * pinned to JITTER, and only inside its backoff computation, so the delays it chooses are deterministic. The test
 * checks those delays double from one retry to the next, and that the attempts seen on the wire are spaced by at
 * least those delays (lower bounds only: a slow machine can add time, never remove it).
 */

vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});

const JITTER = 0.1;
const EMPLOYEES = 12;
const CHUNK = 5;
/** The SDK's backoff bases (ms): throttling errors, and other transient errors per service. */
const THROTTLING_BASE = 1000;
const DYNAMODB_BASE = 25;
const S3_BASE = 50;

interface WireAttempt {
  invocation: string;
  op: string;
  attempt: number;
  max: number;
  at: number;
  fault: string | null;
}
interface Fault {
  status: number;
  body: string;
  headers: Record<string, string>;
}
type Rule = (op: string, attempt: number, invocation: string) => Fault | undefined;

/** A service's error the way it comes over the wire. */
const dynamoError = (code: string, message: string, extra: Record<string, unknown> = {}): Fault => ({
  status: 400,
  headers: { 'content-type': 'application/x-amz-json-1.0' },
  body: JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${code}`, message, ...extra }),
});
const s3Error = (status: number, code: string, message: string): Fault => ({
  status,
  headers: { 'content-type': 'application/xml' },
  body: `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>FAULT</RequestId></Error>`,
});
const THROUGHPUT = dynamoError(
  'ProvisionedThroughputExceededException',
  'The level of configured provisioned throughput for the table was exceeded.',
);
const THROTTLING: Fault = {
  ...dynamoError('ThrottlingException', 'Rate of requests exceeds the allowed throughput.'),
  body: JSON.stringify({
    __type: 'com.amazon.coral.availability#ThrottlingException',
    message: 'Rate of requests exceeds the allowed throughput.',
  }),
};
const TRANSACTION_THROTTLED = dynamoError(
  'TransactionCanceledException',
  'Transaction cancelled, please refer cancellation reasons for specific reasons [None, ThrottlingError]',
  {
    CancellationReasons: [
      { Code: 'None' },
      { Code: 'ThrottlingError', Message: 'Throughput exceeds the current capacity of your table or index.' },
    ],
  },
);
const TRANSACTION_CONFLICT = dynamoError(
  'TransactionCanceledException',
  'Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict, None]',
  {
    CancellationReasons: [
      { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' },
      { Code: 'None' },
    ],
  },
);
const WRITE_CONFLICT = dynamoError('TransactionConflictException', 'Transaction is ongoing for the item');
const SLOW_DOWN = s3Error(503, 'SlowDown', 'Please reduce your request rate.');
const INTERNAL = s3Error(500, 'InternalError', 'We encountered an internal error. Please try again.');
const UNAVAILABLE = s3Error(503, 'ServiceUnavailable', 'Service is unable to handle request.');

interface Instrumented {
  wire: WireAttempt[];
  /** Delays the SDK chose, in order, with the retry index (0 for the first retry) they were computed for. */
  delays: { retry: number; ms: number }[];
  rule: Rule | undefined;
  strategy: { capacity: number };
}

/**
 * Answers from `rule` instead of the network, and records every attempt; pins the jitter of the client's retry
 * strategy. `op` is the DynamoDB operation (GetItem…) or `METHOD key` for S3.
 */
async function instrument(
  client: { config: unknown },
  opOf: (request: { method: string; path: string; headers: Record<string, string> }) => string,
): Promise<Instrumented> {
  const config = client.config as {
    requestHandler: { handle: (request: never, options: unknown) => Promise<unknown> };
    retryStrategy: () => Promise<unknown>;
    maxAttempts: () => Promise<number>;
  };
  const strategy = (await config.retryStrategy()) as {
    mode: string;
    capacity: number;
    retryBackoffStrategy: { computeNextBackoffDelay: (i: number) => number };
  };
  // The production configuration is what is under test; if the SDK's internals move, this says so loudly.
  expect(await config.maxAttempts()).toBe(5);
  expect(strategy.mode).toBe('standard');
  expect(typeof strategy.retryBackoffStrategy?.computeNextBackoffDelay).toBe('function');
  const self: Instrumented = { wire: [], delays: [], rule: undefined, strategy };
  const backoff = strategy.retryBackoffStrategy;
  const compute = backoff.computeNextBackoffDelay.bind(backoff);
  backoff.computeNextBackoffDelay = (i: number) => {
    const random = Math.random;
    Math.random = () => JITTER;
    try {
      const ms = compute(i);
      self.delays.push({ retry: i, ms });
      return ms;
    } finally {
      Math.random = random;
    }
  };
  const handler = config.requestHandler;
  const send = handler.handle.bind(handler);
  handler.handle = async (request: never, options: unknown) => {
    const r = request as { method: string; path: string; headers: Record<string, string> };
    const op = opOf(r);
    const [, attempt, max] = /attempt=(\d+); max=(\d+)/.exec(r.headers['amz-sdk-request'] ?? '') ?? [];
    const invocation = r.headers['amz-sdk-invocation-id'] ?? '';
    const fault = self.rule?.(op, Number(attempt), invocation);
    self.wire.push({
      invocation,
      op,
      attempt: Number(attempt),
      max: Number(max),
      at: performance.now(),
      fault: fault ? /<Code>(\w+)|#(\w+)"/.exec(fault.body)!.slice(1).find(Boolean)! : null,
    });
    if (fault)
      return {
        response: {
          statusCode: fault.status,
          reason: 'fault',
          headers: { ...fault.headers, 'x-amzn-requestid': 'FAULT' },
          body: Readable.from([Buffer.from(fault.body)]),
        },
      };
    return send(request, options);
  };
  return self;
}

/** Fails the first `failures` attempts of each of the first `requests` logical requests `match` accepts. */
function failFirst(match: (op: string) => boolean, faults: readonly Fault[], requests = Infinity): Rule {
  const chosen = new Set<string>();
  return (op, attempt, invocation) => {
    if (!match(op)) return undefined;
    if (!chosen.has(invocation)) {
      if (chosen.size >= requests) return undefined;
      chosen.add(invocation);
    }
    return faults[attempt - 1];
  };
}

/** The attempts of each logical request, in order. */
function byRequest(wire: WireAttempt[], match: (a: WireAttempt) => boolean = () => true): WireAttempt[][] {
  const groups = new Map<string, WireAttempt[]>();
  for (const a of wire.filter(match)) groups.set(a.invocation, [...(groups.get(a.invocation) ?? []), a]);
  return [...groups.values()];
}

/**
 * A request retried after each of its faults, the k-th retry no sooner than the delay the SDK's formula gives for
 * it (base × 2^(k-1) × JITTER, base by error type), which doubles from one retry to the next.
 */
function expectBackoff(attempts: WireAttempt[], base: (fault: string) => number) {
  expect(attempts.map((a) => a.attempt)).toEqual(attempts.map((_, i) => i + 1));
  // The faults followed by another attempt: the last one of a request that gave up was not retried.
  const retried = attempts.slice(0, -1);
  expect(retried.every((a) => a.fault)).toBe(true);
  const unrounded = retried.map((f, k) => JITTER * Math.min(base(f.fault!) * 2 ** k, 20_000));
  const expected = unrounded.map(Math.floor);
  for (let k = 0; k < retried.length; k++) {
    // A timer fires no earlier than asked, measured from the event loop's clock, which can lag a few ms behind.
    expect(
      attempts[k + 1]!.at - attempts[k]!.at,
      `gap before attempt ${k + 2} of ${attempts[0]!.op}`,
    ).toBeGreaterThanOrEqual(expected[k]! - 3);
    if (k > 0 && base(retried[k]!.fault!) === base(retried[k - 1]!.fault!))
      expect(unrounded[k]).toBe(2 * unrounded[k - 1]!);
  }
  figures.retries += retried.length;
  figures.attempts += attempts.length;
  return expected;
}

let s: ProcessorServices;
let queues: Awaited<ReturnType<typeof createTestQueues>>;
let dynamo: Instrumented;
let s3: Instrumented;
let handler: (event: SQSEvent, context: typeof lambdaContext) => Promise<SQSBatchResponse>;
const figures = { attempts: 0, retries: 0, redeliveries: 0, runs: 0, failedRuns: 0 };

beforeAll(async () => {
  const [table, q, bucket] = await Promise.all([createTestTable('sdk-faults'), createTestQueues(), createTestBucket()]);
  queues = q;
  Object.assign(process.env, engineEnvironment(), {
    TABLE_NAME: table.tableName,
    DISBURSEMENT_BUCKET: bucket,
    PAYROLL_QUEUE_URL: queues.payroll,
    WEBHOOK_QUEUE_URL: queues.webhooks,
    PAYROLL_LOCAL_MASTER_KEY: randomBytes(32).toString('base64'),
  });
  resetConfigForTests();
  const processor = await import('../../functions/processor/process-payroll.js');
  handler = processor.handler as typeof handler;
  // The processor's own repositories and clients: what the test sets up and inspects is what it uses.
  s = processor.services;
  dynamo = await instrument(documentClient(), (r) => r.headers['x-amz-target']?.split('.')[1] ?? r.method);
  // The very instance the processor writes with.
  s3 = await instrument(
    await defaultObjectStore().client(),
    (r) => `${r.method} ${decodeURIComponent(r.path).split('/').slice(2).join('/')}`,
  );
});

beforeEach(() => {
  dynamo.rule = undefined;
  s3.rule = undefined;
  dynamo.wire.length = 0;
  s3.wire.length = 0;
  // Each test starts with a full retry quota, as a fresh container would.
  dynamo.strategy.capacity = 500;
  s3.strategy.capacity = 500;
});

afterAll(() => {
  console.info(`sdk faults: ${JSON.stringify(figures)}`);
});

async function organizationWithEmployees() {
  const org = await createOrganization(s.organizations, systemDeps, { name: 'Fault Co', environment: 'sandbox' });
  const employeeIds: string[] = [];
  for (let i = 0; i < EMPLOYEES; i++) {
    const e = await createEmployee(s, org.organization_id, {
      first_name: 'Worker',
      last_name: `No ${i}`,
      email: `worker${i}@example.com`,
      employment_type: 'full_time',
      pay_group: 'default',
      pay_schedule: 'biweekly',
      start_date: '2026-01-05',
      bank_account: { account_number: String(30_000_000 + i), routing_number: '021000021', account_type: 'checking' },
    });
    employeeIds.push(e.employee_id);
  }
  return { orgId: org.organization_id, employeeIds };
}

async function submit(orgId: string, employeeIds: string[]) {
  const outcome = await submitPayroll(
    { ...s, chunkSize: CHUNK },
    { organizationId: orgId, environment: 'sandbox' },
    payrollBody(employeeIds),
    { dryRun: false },
  );
  if (outcome.kind !== 'accepted') throw new Error('expected acceptance');
  return outcome.data.payroll_id;
}

function toRecord(m: Message): SQSRecord {
  return {
    messageId: m.MessageId!,
    receiptHandle: m.ReceiptHandle!,
    body: m.Body!,
    attributes: {
      ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
      SentTimestamp: '0',
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: '0',
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:payroll-processing',
    awsRegion: 'us-east-1',
  };
}

/**
 * Plays SQS and the event source for the processor: the real handler, the real receive counts, a failed message
 * handed back at once (its visibility timeout elapsing), the DLQ after maxReceiveCount, until the run is finished
 * and the queue empty. Returns the failed deliveries and the messages dead-lettered.
 */
async function runProcessor(orgId: string, payrollId: string) {
  const sqs = testSqsClient();
  let failures = 0;
  let empty = 0;
  for (let round = 0; round < 200; round++) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queues.payroll,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) {
      const record = await s.payrolls.get(orgId, payrollId);
      if (record && ['completed', 'failed'].includes(record.status) && ++empty >= 2) break;
      continue;
    }
    empty = 0;
    const response = await handler({ Records: messages.map(toRecord) }, lambdaContext);
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    failures += failed.size;
    await Promise.all(
      messages.map((m) =>
        failed.has(m.MessageId!)
          ? sqs.send(
              new ChangeMessageVisibilityCommand({
                QueueUrl: queues.payroll,
                ReceiptHandle: m.ReceiptHandle!,
                VisibilityTimeout: 0,
              }),
            )
          : sqs.send(new DeleteMessageCommand({ QueueUrl: queues.payroll, ReceiptHandle: m.ReceiptHandle! })),
      ),
    );
  }
  const dead: string[] = [];
  for (;;) {
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queues.payroll_dlq, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    if (!out.Messages?.length) break;
    for (const m of out.Messages) {
      dead.push(m.Body!);
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queues.payroll_dlq, ReceiptHandle: m.ReceiptHandle! }));
    }
  }
  figures.redeliveries += failures;
  figures.runs++;
  return { failures, dead, record: (await s.payrolls.get(orgId, payrollId))! };
}

const paystubsOf = (payrollId: string) =>
  paystubItemsOf({ doc: documentClient(), tableName: process.env.TABLE_NAME! }, payrollId);

async function expectCompletedOnce(orgId: string, payrollId: string, employeeIds: string[]) {
  const record = (await s.payrolls.get(orgId, payrollId))!;
  expect(record.status).toBe('completed');
  expect(record.status_history.map((h) => h.status)).toEqual(['pending', 'processing', 'completed']);
  const stubs = await paystubsOf(payrollId);
  expect(stubs).toHaveLength(employeeIds.length);
  expect(new Set(stubs.map((p) => p.employee_id))).toEqual(new Set(employeeIds));
  const content = (await runFile(s, orgId, payrollId))!;
  const control = parseControlTotals(content);
  expect(control.entryAddendaCount).toBe(employeeIds.length);
  expect(control.totalCreditCents).toBe(record.totals.net_pay);
  assertBankRules(readNacha(content), { payDate: record.pay_date, balanced: false });
}

async function expectFailedWithReason(orgId: string, payrollId: string, dead: string[], step: string, error: string) {
  const record = (await s.payrolls.get(orgId, payrollId))!;
  expect(record.status).toBe('failed');
  expect(record.status_history.map((h) => h.status)).toEqual(['pending', 'processing', 'failed']);
  const reason = `Processing failed after ${QUEUE_DEFINITIONS.payroll.maxReceiveCount} attempts (${step} step): ${error}`;
  expect(record.failure_reason).toBe(reason);
  expect(record.status_history.at(-1)!.reason).toBe(reason);
  const events = await s.events.list(orgId, { payrollId, type: 'payroll.failed' }, 10);
  expect(events.items).toEqual([expect.objectContaining({ data: expect.objectContaining({ reason }) })]);
  // The message the queue gave up on is kept in the DLQ.
  expect(dead.map((b) => JSON.parse(b))).toContainEqual(expect.objectContaining({ kind: step, payroll_id: payrollId }));
  expect(await s.payrolls.listUnfinished(new Date(Date.now() + 3_600_000).toISOString(), 1000)).not.toContainEqual(
    expect.objectContaining({ payroll_id: payrollId }),
  );
  figures.failedRuns++;
}

describe('the clients the handlers build', () => {
  it('retry with the standard strategy, 5 attempts, for DynamoDB, S3 and SQS', async () => {
    for (const client of [documentClient(), await defaultObjectStore().client(), sqsClient()]) {
      const config = client.config as {
        maxAttempts: () => Promise<number>;
        retryStrategy: () => Promise<{ mode: string }>;
      };
      expect(await config.maxAttempts()).toBe(5);
      expect((await config.retryStrategy()).mode).toBe('standard');
    }
  });
});

describe('S3 errors on the payroll objects', () => {
  it('retries 500 InternalError on every write (body, chunk files, entries, NACHA file) with doubling delays; no SQS redelivery', async () => {
    const { orgId, employeeIds } = await organizationWithEmployees();
    s3.rule = failFirst((op) => op.startsWith('PUT '), [INTERNAL, INTERNAL, INTERNAL]);
    const payrollId = await submit(orgId, employeeIds);
    const { failures } = await runProcessor(orgId, payrollId);
    expect(failures).toBe(0);
    await expectCompletedOnce(orgId, payrollId, employeeIds);
    const writes = byRequest(s3.wire, (a) => a.op.startsWith('PUT '));
    const kinds = writes.map((w) =>
      w[0]!.op.split('/').at(-2) === 'chunks'
        ? 'chunk'
        : w[0]!.op.split('/').at(-2) === 'entries'
          ? 'entries'
          : w[0]!.op.split('/').at(-1),
    );
    expect(kinds.sort()).toEqual([
      'chunk',
      'chunk',
      'chunk',
      'disbursement.ach',
      'entries',
      'entries',
      'entries',
      'submission.json',
    ]);
    for (const attempts of writes) {
      expect(attempts.map((a) => a.fault)).toEqual(['InternalError', 'InternalError', 'InternalError', null]);
      expect(expectBackoff(attempts, () => S3_BASE)).toEqual([5, 10, 20]);
    }
  });

  it('retries 503 SlowDown on reads and writes with the throttling backoff; no SQS redelivery', async () => {
    const { orgId, employeeIds } = await organizationWithEmployees();
    s3.rule = failFirst((op) => op.startsWith('PUT ') || op.startsWith('GET '), [SLOW_DOWN, SLOW_DOWN]);
    const payrollId = await submit(orgId, employeeIds);
    const { failures } = await runProcessor(orgId, payrollId);
    expect(failures).toBe(0);
    await expectCompletedOnce(orgId, payrollId, employeeIds);
    const requests = byRequest(s3.wire, (a) => a.op.includes(payrollId));
    // Nothing is deleted at run time: work files are left for the bucket's lifecycle to expire.
    expect(requests.filter((r) => r[0]!.op.startsWith('DELETE '))).toEqual([]);
    expect(requests.filter((r) => r[0]!.op.startsWith('GET ')).length).toBeGreaterThanOrEqual(1 + 3 + 3);
    for (const attempts of requests) {
      expect(attempts.map((a) => a.fault)).toEqual(['SlowDown', 'SlowDown', null]);
      expect(expectBackoff(attempts, () => THROTTLING_BASE)).toEqual([100, 200]);
    }
  });

  it('ends the run failed with the reason when the NACHA file write keeps failing: 5 attempts per receive, 5 receives', async () => {
    const { orgId, employeeIds } = await organizationWithEmployees();
    const payrollId = await submit(orgId, employeeIds);
    s3.rule = (op) => (op === `PUT ${objectKeys.disbursement(orgId, payrollId)}` ? INTERNAL : undefined);
    const { dead } = await runProcessor(orgId, payrollId);
    await expectFailedWithReason(orgId, payrollId, dead, 'finalize', 'InternalError');
    // Its chunks had written every paystub; with no file released they are voided and no payment is scheduled.
    const stubs = await paystubsOf(payrollId);
    expect(stubs).toHaveLength(employeeIds.length);
    expect(stubs.map((p) => [p.status, p.payment.status])).toEqual(stubs.map(() => ['voided', 'cancelled']));
    const writes = byRequest(s3.wire, (a) => a.op.endsWith('disbursement.ach'));
    expect(writes).toHaveLength(QUEUE_DEFINITIONS.payroll.maxReceiveCount);
    for (const attempts of writes) {
      expect(attempts).toHaveLength(5);
      expect(expectBackoff(attempts, () => S3_BASE)).toEqual([5, 10, 20, 40]);
    }
  });

  it('ends the run failed with the reason when the chunk files cannot be written', async () => {
    const { orgId, employeeIds } = await organizationWithEmployees();
    const payrollId = await submit(orgId, employeeIds);
    s3.rule = (op) => (op.startsWith('PUT ') && op.includes('/chunks/') ? UNAVAILABLE : undefined);
    const { dead } = await runProcessor(orgId, payrollId);
    await expectFailedWithReason(orgId, payrollId, dead, 'start', 'ServiceUnavailable');
    // Every receive wrote the 3 chunk files, each with the SDK's backoff. The first receive made all 5 attempts of
    // each; later ones may make fewer: the client's retry quota (500 tokens, 14 per transient retry) runs dry in a
    // sustained outage, by design, and the queue's redeliveries carry on.
    const writes = byRequest(s3.wire, (a) => a.op.includes('/chunks/'));
    expect(writes).toHaveLength(QUEUE_DEFINITIONS.payroll.maxReceiveCount * Math.ceil(EMPLOYEES / CHUNK));
    expect(writes.slice(0, 3).map((w) => w.length)).toEqual([5, 5, 5]);
    for (const attempts of writes)
      expect(expectBackoff(attempts, () => S3_BASE)).toEqual([5, 10, 20, 40].slice(0, attempts.length - 1));
    expect((await s.payrolls.get(orgId, payrollId))!.chunk_count).toBeNull();
  });

  it('refuses a submission whose body cannot be stored, leaving no payroll behind', async () => {
    const { orgId, employeeIds } = await organizationWithEmployees();
    s3.rule = (op) => (op.startsWith('PUT ') ? INTERNAL : undefined);
    const error = await submit(orgId, employeeIds).then(
      () => undefined,
      (e: unknown) => e as { name: string; $metadata: { attempts: number } },
    );
    expect(error).toMatchObject({ name: 'InternalError', $metadata: { attempts: 5 } });
    const [attempts, ...others] = byRequest(s3.wire);
    expect(others).toEqual([]);
    expect(expectBackoff(attempts!, () => S3_BASE)).toEqual([5, 10, 20, 40]);
    expect((await s.payrolls.list(orgId, {}, 10)).items).toEqual([]);
    const sqs = testSqsClient();
    expect(
      (await sqs.send(new ReceiveMessageCommand({ QueueUrl: queues.payroll, WaitTimeSeconds: 0 }))).Messages ?? [],
    ).toEqual([]);
  });
});

describe("DynamoDB throttling on the processor's reads and writes", () => {
  const OPS = ['GetItem', 'BatchGetItem', 'TransactWriteItems', 'UpdateItem', 'BatchWriteItem', 'Query'];

  it('retries ProvisionedThroughputExceededException and ThrottlingException with doubling delays; no SQS redelivery', async () => {
    const { orgId, employeeIds } = await organizationWithEmployees();
    const payrollId = await submit(orgId, employeeIds);
    // The first request of each operation fails three times, the two throttling errors in turn.
    const rules = OPS.map((op) => failFirst((o) => o === op, [THROUGHPUT, THROTTLING, THROUGHPUT], 1));
    dynamo.rule = (op, attempt, invocation) => rules.map((r) => r(op, attempt, invocation)).find(Boolean);
    const { failures } = await runProcessor(orgId, payrollId);
    expect(failures).toBe(0);
    dynamo.rule = undefined;
    await expectCompletedOnce(orgId, payrollId, employeeIds);
    const throttled = byRequest(dynamo.wire).filter((r) => r.some((a) => a.fault));
    expect(throttled.map((r) => r[0]!.op).sort()).toEqual([...OPS].sort());
    for (const attempts of throttled) {
      expect(attempts.map((a) => a.fault)).toEqual([
        'ProvisionedThroughputExceededException',
        'ThrottlingException',
        'ProvisionedThroughputExceededException',
        null,
      ]);
      expect(expectBackoff(attempts, () => THROTTLING_BASE)).toEqual([100, 200, 400]);
    }
  });

  it('fails the step when throttling outlasts the 5 attempts; SQS re-delivers it and the run completes exactly once', async () => {
    const { orgId, employeeIds } = await organizationWithEmployees();
    const payrollId = await submit(orgId, employeeIds);
    dynamo.rule = failFirst(
      (op) => op === 'BatchWriteItem',
      [THROUGHPUT, THROUGHPUT, THROUGHPUT, THROUGHPUT, THROUGHPUT],
      1,
    );
    const { failures } = await runProcessor(orgId, payrollId);
    expect(failures).toBe(1);
    await expectCompletedOnce(orgId, payrollId, employeeIds);
    const [attempts] = byRequest(dynamo.wire).filter((r) => r.some((a) => a.fault));
    expect(attempts!.map((a) => a.fault)).toEqual(Array(5).fill('ProvisionedThroughputExceededException'));
    expect(expectBackoff(attempts!, () => THROTTLING_BASE)).toEqual([100, 200, 400, 800]);
  });

  it('retries a transaction cancelled for throttling (TransactionCanceledException [ThrottlingError]) like any throttle', async () => {
    const { orgId, employeeIds } = await organizationWithEmployees();
    const payrollId = await submit(orgId, employeeIds);
    dynamo.rule = failFirst((op) => op === 'TransactWriteItems', [TRANSACTION_THROTTLED, TRANSACTION_THROTTLED], 1);
    const { failures } = await runProcessor(orgId, payrollId);
    await expectCompletedOnce(orgId, payrollId, employeeIds);
    const [attempts] = byRequest(dynamo.wire).filter((r) => r.some((a) => a.fault));
    expect(attempts!.map((a) => a.fault)).toEqual([
      'TransactionCanceledException',
      'TransactionCanceledException',
      null,
    ]);
    expect(expectBackoff(attempts!, () => THROTTLING_BASE)).toEqual([100, 200]);
    expect(failures).toBe(0);
    // A transaction cancelled by a condition is not retried: it would fail the same way.
    dynamo.wire.length = 0;
    const record = (await s.payrolls.get(orgId, payrollId))!;
    const check = {
      ConditionCheck: {
        TableName: process.env.TABLE_NAME,
        Key: { PK: 'NONE', SK: 'NONE' },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    };
    expect(await s.payrolls.transition(record, MOVES.finish, new Date().toISOString(), { alsoWrite: [check] })).toBe(
      false,
    );
    expect(dynamo.wire.filter((a) => a.op === 'TransactWriteItems').map((a) => a.attempt)).toEqual([1]);
  });

  it('retries writes that met another transaction (TransactionConflict, TransactionConflictException) with the ordinary backoff', async () => {
    const { orgId, employeeIds } = await organizationWithEmployees();
    const payrollId = await submit(orgId, employeeIds);
    // Every transaction of the run (its status changes) is cancelled for a conflict twice, and every single-item
    // update (the chunk completions among them) is refused once because a transaction held the item.
    const transactions = failFirst((op) => op === 'TransactWriteItems', [TRANSACTION_CONFLICT, TRANSACTION_CONFLICT]);
    const updates = failFirst((op) => op === 'UpdateItem', [WRITE_CONFLICT]);
    dynamo.rule = (op, attempt, invocation) =>
      transactions(op, attempt, invocation) ?? updates(op, attempt, invocation);
    const { failures } = await runProcessor(orgId, payrollId);
    dynamo.rule = undefined;
    expect(failures).toBe(0);
    await expectCompletedOnce(orgId, payrollId, employeeIds);
    const conflicted = byRequest(dynamo.wire).filter((r) => r.some((a) => a.fault));
    const cancelled = conflicted.filter((r) => r[0]!.op === 'TransactWriteItems');
    const refused = conflicted.filter((r) => r[0]!.op === 'UpdateItem');
    expect(cancelled.length).toBeGreaterThanOrEqual(2);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const attempts of cancelled) {
      expect(attempts.map((a) => a.fault)).toEqual([
        'TransactionCanceledException',
        'TransactionCanceledException',
        null,
      ]);
      expect(expectBackoff(attempts, () => DYNAMODB_BASE)).toEqual([2, 5]);
    }
    for (const attempts of refused) {
      expect(attempts.map((a) => a.fault)).toEqual(['TransactionConflictException', null]);
      expect(expectBackoff(attempts, () => DYNAMODB_BASE)).toEqual([2]);
    }
  });

  it('gives a conflict mixed with a failed condition back to the caller at once: the condition would fail again', async () => {
    const { orgId, employeeIds } = await organizationWithEmployees();
    const payrollId = await submit(orgId, employeeIds);
    const record = (await s.payrolls.get(orgId, payrollId))!;
    // The run's own condition failed (it had already moved), and another item met a conflict.
    const mixed = dynamoError(
      'TransactionCanceledException',
      'Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed, TransactionConflict]',
      {
        CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'TransactionConflict' }],
      },
    );
    const check = {
      ConditionCheck: {
        TableName: process.env.TABLE_NAME,
        Key: { PK: 'NONE', SK: 'NONE' },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    };
    dynamo.wire.length = 0;
    dynamo.rule = failFirst((op) => op === 'TransactWriteItems', [mixed], 1);
    expect(await s.payrolls.transition(record, MOVES.start, new Date().toISOString(), { alsoWrite: [check] })).toBe(
      false,
    );
    dynamo.rule = undefined;
    expect(dynamo.wire.filter((a) => a.op === 'TransactWriteItems').map((a) => a.attempt)).toEqual([1]);
  });
});
