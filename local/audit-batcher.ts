import { AsyncResource } from 'node:async_hooks';
import { BatchWriteCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AuditRecord } from '../shared/adapters/audit-sink.js';
import type { TableRef } from '../shared/adapters/dynamo.js';
import { allows, TABLE_ACCESS } from '../shared/api/table-access.js';
import { AuditRepository } from '../shared/data/audit-repository.js';
import { ingestAuditRecords } from '../shared/use-cases/audit.js';
import { asFunction, callsOf } from './table-guard.js';

/**
 * The local stand-in for the deployed audit pipeline (log line → CloudWatch Logs → subscription → table): the
 * request hands its line to an in-memory buffer and returns at once; the buffer is written to the table every
 * 200 ms, or as soon as it holds 100 lines, through the same use case the deployed ingestion runs.
 *
 * The trade-off, accepted for a development stack: if this process crashes (kill -9, power loss), up to 200 ms of
 * audit lines that were still in the buffer are lost. Deployed there is no such window: the line is in CloudWatch
 * Logs, durably, before the subscription writes it, and a failed write is retried from there. A clean stop
 * (Ctrl-C, SIGTERM) loses nothing: `stop()` writes what is left before the engines stop.
 *
 * How the lines reach the table differs from the deployed ingestion in one storage detail. The use case builds the
 * items (keys, expiry, de-duplication) and hands them to BatchWriteItem in groups of 25; DynamoDB Local commits a
 * BatchWriteItem item by item, and on the local stack's on-disk engine that costs the engine about twice the CPU of
 * the GetItem each request makes, and several times its time, on the cores the requests share with it. So the
 * batcher keeps the use case's BatchWriteItem groups (checked against the ingestion function's grant, as the
 * local table guard checks every function's calls) and commits the same items in TransactWriteItems of up to 100:
 * one commit per 100 lines. Nothing a reader sees changes: the same items, and a line written twice is the same
 * item, so putting back a failed write's lines stays safe.
 */
export interface AuditBatcher {
  /** For `setAuditSink`: never blocks and never throws on the request path. */
  sink(record: AuditRecord): void;
  /** Writes what is buffered now (tests, and the size trigger). */
  flush(): Promise<void>;
  /** Stops the timer and writes the rest. */
  stop(): Promise<void>;
}

export interface AuditBatcherOptions {
  intervalMs?: number;
  maxBatch?: number;
  /** Lines kept while the table refuses writes; past it the oldest are dropped, and said so. */
  maxBuffered?: number;
  onError?: (err: unknown) => void;
}

/** DynamoDB's cap on one TransactWriteItems. 100 audit lines stay far below its 4 MB (a line is bounded to a few KB). */
const TRANSACTION_ITEMS = 100;

/**
 * The table as the ingestion's repository sees it, with its BatchWriteItem groups kept in `into` rather than sent.
 * Each group is checked against the ingestion function's grant first, as local/table-guard.ts would check it.
 * Anything else (the updates of the unattributed failures' burst lines) goes to the table as it is.
 */
function capturingPuts(table: TableRef, into: Record<string, unknown>[]): TableRef {
  const send = (command: unknown) => {
    if (!(command instanceof BatchWriteCommand)) return table.doc.send(command as never);
    for (const call of callsOf('BatchWriteItemCommand', command.input as Record<string, unknown>)) {
      if (!allows(TABLE_ACCESS['audit-ingest'], call.action, call.target))
        throw Object.assign(new Error(`audit-ingest is not authorized to perform dynamodb:${call.action}`), {
          name: 'AccessDeniedException',
        });
    }
    for (const [tableName, requests] of Object.entries(command.input.RequestItems ?? {})) {
      for (const request of requests) {
        if (tableName !== table.tableName || !request.PutRequest)
          throw new Error('audit batcher: the ingestion is expected to put items into its table, nothing else');
        into.push(request.PutRequest.Item as Record<string, unknown>);
      }
    }
    return Promise.resolve({});
  };
  return { tableName: table.tableName, doc: { send } as unknown as DynamoDBDocumentClient };
}

const reportError = (err: unknown) =>
  process.stderr.write(
    `${JSON.stringify({ level: 'ERROR', message: 'audit batcher: write failed, will retry', error: String(err) })}\n`,
  );

export function startAuditBatcher(table: TableRef, options: AuditBatcherOptions = {}): AuditBatcher {
  const intervalMs = options.intervalMs ?? 200;
  const maxBatch = options.maxBatch ?? 100;
  const maxBuffered = options.maxBuffered ?? 10_000;
  const onError = options.onError ?? reportError;
  let buffer: AuditRecord[] = [];
  // One write at a time, in order; a flush asked for while one is queued joins it rather than queueing another.
  let chain: Promise<void> = Promise.resolve();
  let queued = false;

  const write = async () => {
    queued = false;
    if (buffer.length === 0) return;
    const batch = buffer;
    buffer = [];
    try {
      const items: Record<string, unknown>[] = [];
      // As the ingestion function, within its grant (on AWS, a function of its own).
      await asFunction('audit-ingest', () =>
        ingestAuditRecords(new AuditRepository(capturingPuts(table, items)), batch),
      );
      for (let i = 0; i < items.length; i += TRANSACTION_ITEMS) {
        await table.doc.send(
          new TransactWriteCommand({
            TransactItems: items
              .slice(i, i + TRANSACTION_ITEMS)
              .map((Item) => ({ Put: { TableName: table.tableName, Item } })),
          }),
        );
      }
    } catch (err) {
      // Put the lines back in front of the newer ones: the next tick tries again (keys are deterministic).
      buffer = [...batch, ...buffer];
      if (buffer.length > maxBuffered) {
        const dropped = buffer.length - maxBuffered;
        buffer = buffer.slice(dropped);
        onError(new Error(`dropped ${dropped} audit lines: the table has refused writes for too long`));
      }
      onError(err);
    }
  };

  const flush = (): Promise<void> => {
    if (!queued) {
      queued = true;
      chain = chain.then(write);
    }
    return chain;
  };
  // The size trigger fires inside a request, that is inside its function's table grant (local/table-guard.ts); the
  // write belongs to the batcher, not to that function, so it runs in the context the batcher was started in, as
  // the timer's writes do.
  const flushDetached = AsyncResource.bind(() => void flush());

  const timer = setInterval(() => void flush(), intervalMs);
  // The timer alone must not keep the process alive.
  timer.unref();

  return {
    sink(record) {
      buffer.push(record);
      if (buffer.length >= maxBatch) flushDetached();
    },
    flush,
    async stop() {
      clearInterval(timer);
      await flush();
      // One more try for lines a failed write put back; then say what could not be written.
      if (buffer.length > 0) await flush();
      if (buffer.length > 0) onError(new Error(`${buffer.length} audit lines could not be written before the stop`));
    },
  };
}
