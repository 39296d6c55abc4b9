import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../adapters/dynamo.js';
import { TABLE_KEYS } from './keys.js';

export interface Page<T> {
  items: T[];
  /** Where the next page starts; absent when this page is the last one. */
  lastKey?: Record<string, unknown>;
}

/**
 * One page of a query that may carry a filter. It reads one item past the page, so a page that happens to end
 * the results says so (no token leading to an empty page). DynamoDB applies `Limit` before the filter, so a
 * query can return fewer matches than asked; it reads on, each time asking only for what is still missing.
 * The next page starts after the last item returned, whose key is taken from the item itself (table keys, plus
 * the index's keys for an index query: `GSI1` → GSI1PK / GSI1SK).
 */
export async function queryPage<T>(
  table: TableRef,
  input: Omit<QueryCommandInput, 'TableName' | 'Limit' | 'ExclusiveStartKey'>,
  limit: number,
  startKey: Record<string, unknown> | undefined,
  parse: (item: Record<string, unknown>) => T,
): Promise<Page<T>> {
  const raw: Record<string, unknown>[] = [];
  let key = startKey;
  do {
    const out = await table.doc.send(
      new QueryCommand({
        ...input,
        TableName: table.tableName,
        Limit: limit + 1 - raw.length,
        ExclusiveStartKey: key,
      }),
    );
    raw.push(...(out.Items ?? []));
    key = out.LastEvaluatedKey;
  } while (key && raw.length <= limit);
  const page = raw.slice(0, limit);
  const keyNames: string[] = [TABLE_KEYS.pk, TABLE_KEYS.sk];
  if (input.IndexName) keyNames.push(`${input.IndexName}PK`, `${input.IndexName}SK`);
  const last = page.at(-1);
  const more = raw.length > limit;
  return {
    items: page.map(parse),
    lastKey: more && last ? Object.fromEntries(keyNames.map((k) => [k, last[k]])) : undefined,
  };
}
