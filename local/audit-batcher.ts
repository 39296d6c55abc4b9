import type { AuditRecord } from '../shared/adapters/audit-sink.js';
import type { TableRef } from '../shared/adapters/dynamo.js';
import { AuditRepository } from '../shared/data/audit-repository.js';
import { ingestAuditRecords } from '../shared/use-cases/audit.js';
import { asFunction } from './table-guard.js';

/**
 * The local stand-in for the deployed audit pipeline (log line → CloudWatch Logs → subscription → table): the
 * request hands its line to an in-memory buffer and returns at once; the buffer is written to the table every
 * 200 ms, or as soon as it holds 100 lines, through the same use case the deployed ingestion runs.
 *
 * The trade-off, accepted for a development stack: if this process crashes (kill -9, power loss), up to 200 ms of
 * audit lines that were still in the buffer are lost. Deployed there is no such window: the line is in CloudWatch
 * Logs, durably, before the subscription writes it, and a failed write is retried from there. A clean stop
 * (Ctrl-C, SIGTERM) loses nothing: `stop()` writes what is left before the engines stop.
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

const reportError = (err: unknown) =>
  process.stderr.write(
    `${JSON.stringify({ level: 'ERROR', message: 'audit batcher: write failed, will retry', error: String(err) })}\n`,
  );

export function startAuditBatcher(table: TableRef, options: AuditBatcherOptions = {}): AuditBatcher {
  const intervalMs = options.intervalMs ?? 200;
  const maxBatch = options.maxBatch ?? 100;
  const maxBuffered = options.maxBuffered ?? 10_000;
  const onError = options.onError ?? reportError;
  const repo = new AuditRepository(table);
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
      // As the ingestion function, within its grant (on AWS, a function of its own).
      await asFunction('audit-ingest', () => ingestAuditRecords(repo, batch));
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

  const timer = setInterval(() => void flush(), intervalMs);
  // The timer alone must not keep the process alive.
  timer.unref();

  return {
    sink(record) {
      buffer.push(record);
      if (buffer.length >= maxBatch) void flush();
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
