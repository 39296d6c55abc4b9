import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { required } from '../config/env.js';
import { traced } from './observability.js';

/**
 * Clients are built once per container. The endpoint comes from the SDK's own AWS_ENDPOINT_URL_DYNAMODB
 * variable, which the local stack sets, so the handler code is identical locally and on AWS.
 */
let doc: DynamoDBDocumentClient | undefined;

/**
 * The SDK's logging step writes each call's input and output, filtered of sensitive fields, to `logger.info`
 * when the logger has one: its default logger does (a no-op), so every answer was walked field by field for nothing
 * (measured: about a tenth of the processor's own CPU in a 10,000-employee run). This logger has no `info`, so the
 * step skips the filtering. Its other methods discard too: on a failed call the step logs the whole input
 * (DynamoDB marks no field sensitive), and failed conditions are this service's everyday control flow; errors reach
 * the handlers, which log them through their redacting logger.
 */
const QUIET_LOGGER = {
  debug: () => {},
  trace: () => {},
  warn: () => {},
  error: () => {},
} as unknown as NonNullable<ConstructorParameters<typeof DynamoDBClient>[0]>['logger'];

/** The document client over `client`; by default the container's own, traced when tracing is on (observability.ts). */
export function createDocumentClient(
  client: DynamoDBClient = traced(new DynamoDBClient({ maxAttempts: 5, logger: QUIET_LOGGER })),
): DynamoDBDocumentClient {
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (err) {
        const retry = transactionRetry(err);
        if (retry) Object.assign(err as object, { $retryable: retry });
        throw err;
      }
    },
    { step: 'finalizeRequest', priority: 'low', name: 'retryTransactionConflictsAndThrottles', override: true },
  );
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    unmarshallOptions: { wrapNumbers: false },
  });
}

export function documentClient(): DynamoDBDocumentClient {
  doc ??= createDocumentClient();
  return doc;
}

/** Cancellation reasons that say "try again" rather than "this cannot succeed" (ConditionalCheckFailed, ValidationError…). */
const THROTTLED_REASONS = new Set(['ThrottlingError', 'ProvisionedThroughputExceeded']);
/** Another transaction held one of the items: nothing was written, and the same request may well succeed now. */
const CONFLICT_REASON = 'TransactionConflict';

/**
 * Errors the SDK's standard retry treats as final although trying again is right, and how to retry them:
 * - a transaction DynamoDB cancelled for throttling (TransactionCanceledException with a ThrottlingError or
 *   ProvisionedThroughputExceeded reason): retried as throttling;
 * - a transaction cancelled for a conflict with another transaction on the same item (a TransactionConflict
 *   reason), and a single-item write refused because a transaction held its item (TransactionConflictException):
 *   retried with the ordinary backoff. Status changes of one run meet each other this way (a cancel racing the
 *   processor, a chunk finishing while the run moves), and API requests racing for one email or idempotency key.
 * Without this, a processor step would wait out its queue's visibility timeout (15 minutes) and an API request
 * would answer 500 instead of its real outcome. A cancellation is retried only when every reason is one of these
 * or None: one with a failed condition would fail again, and its error reaches the caller as before. Retrying is
 * safe because a cancelled or refused write changed nothing and DynamoDB checks every condition again.
 */
function transactionRetry(err: unknown): { throttling: boolean } | undefined {
  const e = err as { name?: string; CancellationReasons?: { Code?: string }[] };
  if (e?.name === 'TransactionConflictException') return { throttling: false };
  if (e?.name !== 'TransactionCanceledException' || !e.CancellationReasons) return undefined;
  const codes = e.CancellationReasons.map((r) => r.Code ?? 'None');
  if (!codes.every((c) => c === 'None' || c === CONFLICT_REASON || THROTTLED_REASONS.has(c))) return undefined;
  if (codes.some((c) => THROTTLED_REASONS.has(c))) return { throttling: true };
  return codes.includes(CONFLICT_REASON) ? { throttling: false } : undefined;
}

export interface TableRef {
  doc: DynamoDBDocumentClient;
  tableName: string;
}

export function defaultTable(): TableRef {
  return { doc: documentClient(), tableName: required('TABLE_NAME') };
}
