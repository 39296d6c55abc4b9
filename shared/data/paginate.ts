import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../adapters/dynamo.js';

export interface Page<T> {
  items: T[];
  lastKey?: Record<string, unknown>;
}

/**
 * One page of a query that may carry a filter. DynamoDB applies `Limit` before the filter, so a single query
 * can return fewer matches than asked; this reads on, each time asking only for what is still missing, so the
 * last key evaluated is always the last item returned and the next page starts exactly after it.
 */
export async function queryPage<T>(
  table: TableRef,
  input: Omit<QueryCommandInput, 'TableName' | 'Limit' | 'ExclusiveStartKey'>,
  limit: number,
  startKey: Record<string, unknown> | undefined,
  parse: (item: Record<string, unknown>) => T,
): Promise<Page<T>> {
  const items: T[] = [];
  let key = startKey;
  do {
    const out = await table.doc.send(new QueryCommand({
      ...input, TableName: table.tableName, Limit: limit - items.length, ExclusiveStartKey: key,
    }));
    for (const item of out.Items ?? []) items.push(parse(item));
    key = out.LastEvaluatedKey;
  } while (key && items.length < limit);
  return { items, lastKey: key };
}
