import { randomUUID } from 'node:crypto';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { StackState } from './stack-state.js';
import { documentClient } from '../shared/adapters/dynamo.js';
import { asFunction, guardTable } from './table-guard.js';

/**
 * The local stand-in for Lambda's SQS event source: long-polls a queue, hands each batch to the same handler
 * the deployed function runs, deletes what succeeded and returns what failed (ReportBatchItemFailures). On AWS a
 * failed message waits out its visibility timeout; here it comes back after a short backoff so a retry is seen
 * in seconds, and after the queue's maxReceiveCount the engine moves it to the dead-letter queue as SQS does.
 */
export interface WorkerOptions {
  name: string;
  queueUrl: string;
  queueArn: string;
  handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;
  /** Pollers running side by side; each takes up to `batchSize` messages. */
  concurrency: number;
  batchSize?: number;
  /** Seconds before a failed message is visible again, by receive count (1st failure, 2nd, …); 'handler' leaves it to the handler. */
  retryDelaysSeconds?: readonly number[] | 'handler';
  onError?: (err: unknown) => void;
}

export interface Worker {
  stop(): Promise<void>;
  /** Resolves when no batch is being handled (for tests that await quiescence). */
  idle(): Promise<void>;
}

function toRecord(m: Message, arn: string): SQSEvent['Records'][number] {
  const attrs = m.Attributes ?? {};
  return {
    messageId: m.MessageId!,
    receiptHandle: m.ReceiptHandle!,
    body: m.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attrs.ApproximateReceiveCount ?? '1',
      SentTimestamp: attrs.SentTimestamp ?? String(Date.now()),
      SenderId: attrs.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attrs.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: arn,
    awsRegion: arn.split(':')[3] ?? 'us-east-1',
  };
}

function context(name: string): Context {
  const deadline = Date.now() + 900_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => deadline - Date.now(),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export function startWorker(sqs: SQSClient, o: WorkerOptions): Worker {
  let running = true;
  let busy = 0;
  let idleWaiters: (() => void)[] = [];
  const abort = new AbortController();
  const delays = o.retryDelaysSeconds ?? [1, 2, 4, 8];

  const settle = async (messages: Message[], failedIds: Set<string>) => {
    const succeeded = messages.filter((m) => !failedIds.has(m.MessageId!));
    if (succeeded.length > 0) {
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: o.queueUrl,
          Entries: succeeded.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
    }
    if (delays === 'handler') return;
    await Promise.all(
      messages
        .filter((m) => failedIds.has(m.MessageId!))
        .map((m) => {
          const receives = Number(m.Attributes?.ApproximateReceiveCount ?? '1');
          const delay = delays[Math.min(receives - 1, delays.length - 1)] ?? 1;
          return sqs.send(
            new ChangeMessageVisibilityCommand({
              QueueUrl: o.queueUrl,
              ReceiptHandle: m.ReceiptHandle!,
              VisibilityTimeout: delay,
            }),
          );
        }),
    );
  };

  const poll = async () => {
    while (running) {
      let messages: Message[] = [];
      try {
        const out = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: o.queueUrl,
            MaxNumberOfMessages: o.batchSize ?? 10,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['All'],
          }),
          { abortSignal: abort.signal },
        );
        messages = out.Messages ?? [];
      } catch (err) {
        if (!running) return;
        o.onError?.(err);
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (messages.length === 0) continue;
      busy++;
      try {
        let failed: Set<string>;
        try {
          const res = await o.handler({ Records: messages.map((m) => toRecord(m, o.queueArn)) }, context(o.name));
          failed = new Set((res?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
        } catch (err) {
          o.onError?.(err);
          failed = new Set(messages.map((m) => m.MessageId!));
        }
        await settle(messages, failed);
      } catch (err) {
        o.onError?.(err);
      } finally {
        busy--;
        if (busy === 0) {
          const waiters = idleWaiters;
          idleWaiters = [];
          for (const w of waiters) w();
        }
      }
    }
  };

  const pollers = Array.from({ length: o.concurrency }, () => poll());
  return {
    async stop() {
      running = false;
      abort.abort();
      await Promise.allSettled(pollers);
    },
    idle: () => (busy === 0 ? Promise.resolve() : new Promise<void>((r) => idleWaiters.push(r))),
  };
}

function queueArn(state: StackState, url: string): string {
  return `arn:aws:sqs:${state.region}:000000000000:${url.split('/').pop()}`;
}

/**
 * The queue consumers Lambda runs on AWS, polled in this process. Their modules are loaded here, once the
 * environment holds the stack's configuration: each builds its clients at module scope, as on Lambda.
 */
export async function startLocalWorkers(
  state: StackState,
  concurrency = Number(process.env.PAYROLL_LOCAL_WORKER_CONCURRENCY ?? 4),
): Promise<Worker[]> {
  const { handler: processPayrollHandler } = await import('../functions/processor/process-payroll.js');
  const { handler: deliverEventHandler } = await import('../functions/webhooks/deliver-event.js');
  // Each within its own table grant, as its role holds it on AWS (local/table-guard.ts).
  guardTable(documentClient());
  const processPayroll: typeof processPayrollHandler = (event, context) =>
    asFunction('processor', () => processPayrollHandler(event, context));
  const deliverEvent: typeof deliverEventHandler = (event, context) =>
    asFunction('deliverer', () => deliverEventHandler(event, context));
  const sqs = new SQSClient({
    endpoint: state.sqs_endpoint,
    region: state.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const onError = (err: unknown) =>
    process.stderr.write(`${JSON.stringify({ level: 'ERROR', message: 'local worker error', error: String(err) })}\n`);
  return [
    startWorker(sqs, {
      name: 'process-payroll',
      queueUrl: state.queues.payroll,
      queueArn: queueArn(state, state.queues.payroll),
      handler: processPayroll,
      concurrency,
      // One message at a time per poller: a run's chunks are processed `concurrency` at a time, which keeps the one
      // engine as busy as more would, and its progress moves as they finish instead of all at the end.
      batchSize: 1,
      onError,
    }),
    // The delivery handler sets each retry's delay itself (from PAYROLL_WEBHOOK_RETRY_DELAYS_S), as it does on AWS.
    startWorker(sqs, {
      name: 'deliver-event',
      queueUrl: state.queues.webhooks,
      queueArn: queueArn(state, state.queues.webhooks),
      handler: deliverEvent,
      concurrency: 2,
      retryDelaysSeconds: 'handler',
      onError,
    }),
  ];
}
