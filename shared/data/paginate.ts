import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../adapters/dynamo.js';
import { TABLE_KEYS } from './keys.js';

export interface Page<T> {
  items: T[];
  /** Where the next page starts; absent when this page is the last one. */
  lastKey?: Record<string, unknown>;
}

/**
 * What one page may read (CONTRACT: every list has a read budget). With a filter, DynamoDB evaluates items before
 * filtering them, so a filter that matches nothing in a 25,000-item partition could otherwise turn one API call
 * into a read of the whole partition; past the budget the page ends short (possibly empty) with a cursor where the
 * reading stopped.
 */
export interface ReadBudget {
  /** Query calls one page may make. */
  maxReadsPerPage: number;
  /** Items evaluated per Query when a filter is set: large enough that a selective filter still fills a page. */
  filteredReadSize: number;
}

export const DEFAULT_READ_BUDGET: ReadBudget = { maxReadsPerPage: 10, filteredReadSize: 1_000 };

/**
 * One page of a query that may carry a filter. It reads one item past the page, so a page that happens to end
 * the results says so (no token leading to an empty page). DynamoDB applies `Limit` before the filter, so a
 * filtered query whose first read (the page's size) came back short reads on `filteredReadSize` items at a time
 * until the page is full or the budget is spent: a filter that drops nothing costs what an unfiltered page does. The next page starts after the last item returned, whose key is taken from the item itself (table keys,
 * plus the index's keys for an index query: `GSI2` → GSI2PK / GSI2SK); or, when the budget ran out first, where
 * the reading stopped.
 */
export async function queryPage<T>(
  table: TableRef,
  input: Omit<QueryCommandInput, 'TableName' | 'Limit' | 'ExclusiveStartKey'>,
  limit: number,
  startKey: Record<string, unknown> | undefined,
  parse: (item: Record<string, unknown>) => T,
  budget: ReadBudget = DEFAULT_READ_BUDGET,
): Promise<Page<T>> {
  const filtered = Boolean(input.FilterExpression);
  const raw: Record<string, unknown>[] = [];
  let key = startKey;
  let reads = 0;
  do {
    const out = await table.doc.send(
      new QueryCommand({
        ...input,
        TableName: table.tableName,
        // The first read asks for the page; a filtered query that came back short reads on in larger steps.
        Limit: filtered && reads > 0 ? budget.filteredReadSize : limit + 1 - raw.length,
        ExclusiveStartKey: key,
      }),
    );
    raw.push(...(out.Items ?? []));
    key = out.LastEvaluatedKey;
    reads++;
  } while (key && raw.length <= limit && reads < budget.maxReadsPerPage);
  if (raw.length <= limit) return { items: raw.map(parse), lastKey: key };
  const page = raw.slice(0, limit);
  const keyNames: string[] = [TABLE_KEYS.pk, TABLE_KEYS.sk];
  if (input.IndexName) keyNames.push(`${input.IndexName}PK`, `${input.IndexName}SK`);
  const last = page.at(-1)!;
  return { items: page.map(parse), lastKey: Object.fromEntries(keyNames.map((k) => [k, last[k]])) };
}

/** Every item a query matches, all pages read one after another (for sets a pass works through whole). */
export async function queryAll(
  table: TableRef,
  input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>,
): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await table.doc.send(
      new QueryCommand({ ...input, TableName: table.tableName, ExclusiveStartKey: start }),
    );
    out.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}
