import { BatchGetCommand, BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../adapters/dynamo.js';
import type { Key } from './keys.js';

const GET_BATCH = 100;
const WRITE_BATCH = 25;
const MAX_ATTEMPTS = 8;

/** A pause before attempt `attempt + 1`: doubling from 25 ms, at most 1 s, jittered (half to all of it). */
export const backoff = (attempt: number) =>
  new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2)));

/** Runs `fn` over `items` with at most `parallel` calls in flight. */
export async function inParallel<T>(
  items: readonly T[],
  parallel: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(parallel, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(workers);
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Reads many items by key: BatchGetItem in groups of 100, several in flight, and the unprocessed keys of each
 * answer (DynamoDB's partial success under load) asked again with jittered backoff until none remain.
 */
export async function batchGetAll(
  table: TableRef,
  keys: readonly Key[],
  options: { parallel?: number; consistent?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  await inParallel(chunks(keys, GET_BATCH), options.parallel ?? 8, async (group) => {
    let pending: Record<string, unknown>[] = group.map((k) => ({ PK: k.PK, SK: k.SK }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === MAX_ATTEMPTS)
        throw new Error(`BatchGetItem left ${pending.length} keys unprocessed after ${MAX_ATTEMPTS} attempts`);
      if (attempt > 0) await backoff(attempt);
      const out = await table.doc.send(
        new BatchGetCommand({
          RequestItems: { [table.tableName]: { Keys: pending, ConsistentRead: options.consistent ?? true } },
        }),
      );
      found.push(...(out.Responses?.[table.tableName] ?? []));
      pending = (out.UnprocessedKeys?.[table.tableName]?.Keys ?? []) as Record<string, unknown>[];
    }
  });
  return found;
}

/**
 * Writes many items: BatchWriteItem in groups of 25, several in flight, unprocessed items retried with jittered
 * backoff. Puts are whole-item and deterministic in this service, so writing an item twice changes nothing.
 */
export async function batchPutAll(
  table: TableRef,
  items: readonly Record<string, unknown>[],
  options: { parallel?: number } = {},
): Promise<void> {
  await inParallel(chunks(items, WRITE_BATCH), options.parallel ?? 8, async (group) => {
    let pending = group.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === MAX_ATTEMPTS)
        throw new Error(`BatchWriteItem left ${pending.length} items unprocessed after ${MAX_ATTEMPTS} attempts`);
      if (attempt > 0) await backoff(attempt);
      const out = await table.doc.send(new BatchWriteCommand({ RequestItems: { [table.tableName]: pending } }));
      pending = (out.UnprocessedItems?.[table.tableName] ?? []) as typeof pending;
    }
  });
}
