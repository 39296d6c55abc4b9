import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { required } from '../config/env.js';

/**
 * Clients are built once per container. The endpoint comes from the SDK's own AWS_ENDPOINT_URL_DYNAMODB
 * variable, which the local stack sets, so the handler code is identical locally and on AWS.
 */
let doc: DynamoDBDocumentClient | undefined;

export function createDocumentClient(client: DynamoDBClient = new DynamoDBClient({ maxAttempts: 5 })): DynamoDBDocumentClient {
  client.middlewareStack.add((next) => async (args) => {
    try {
      return await next(args);
    } catch (err) {
      if (isThrottledTransaction(err)) Object.assign(err as object, { $retryable: { throttling: true } });
      throw err;
    }
  }, { step: 'finalizeRequest', priority: 'low', name: 'retryThrottledTransactions', override: true });
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

/**
 * DynamoDB reports a throttled transaction as TransactionCanceledException with a ThrottlingError (or
 * ProvisionedThroughputExceeded) reason, which the SDK's standard retry does not recognise: such a step would wait
 * out its queue's visibility timeout (15 minutes for the processor) instead of backing off for a second. The
 * middleware above, inside the SDK's retry middleware, marks such an error retryable as throttling, so it gets the
 * same backoff and attempts as any other throttle. Only when every reason is a throttle or None: a cancellation
 * with a failed condition would fail again.
 */
function isThrottledTransaction(err: unknown): boolean {
  const e = err as { name?: string; CancellationReasons?: { Code?: string }[] };
  if (e?.name !== 'TransactionCanceledException' || !e.CancellationReasons) return false;
  const codes = e.CancellationReasons.map((r) => r.Code ?? 'None');
  return codes.some((c) => THROTTLED_REASONS.has(c)) && codes.every((c) => c === 'None' || THROTTLED_REASONS.has(c));
}

export interface TableRef {
  doc: DynamoDBDocumentClient;
  tableName: string;
}

export function defaultTable(): TableRef {
  return { doc: documentClient(), tableName: required('TABLE_NAME') };
}
