import { BatchGetCommand, BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { batchGetAll, batchPutAll } from '../../shared/data/batch.js';

const ddb = mockClient(DynamoDBDocumentClient);
const table = { doc: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' })), tableName: 't' };
afterEach(() => ddb.reset());

describe('batched writes and reads under DynamoDB partial success', () => {
  it('writes 60 items in groups of 25 and retries the unprocessed ones until none remain', async () => {
    const items = Array.from({ length: 60 }, (_, i) => ({ PK: `P${i}`, SK: 'S' }));
    let calls = 0;
    ddb
      .on(BatchWriteCommand)
      .callsFake((input: { RequestItems: Record<string, { PutRequest: { Item: unknown } }[]> }) => {
        calls++;
        const requests = input.RequestItems.t!;
        // The first answer of every group leaves its last two items unprocessed, as a throttled table does.
        return calls <= 3 && requests.length > 2 ? { UnprocessedItems: { t: requests.slice(-2) } } : {};
      });
    await batchPutAll(table, items);
    const written = ddb
      .commandCalls(BatchWriteCommand)
      .flatMap((c) => c.args[0].input.RequestItems!.t!.map((r) => (r.PutRequest!.Item as { PK: string }).PK));
    expect(new Set(written)).toEqual(new Set(items.map((i) => i.PK)));
    expect(ddb.commandCalls(BatchWriteCommand).length).toBe(6);
    expect(Math.max(...ddb.commandCalls(BatchWriteCommand).map((c) => c.args[0].input.RequestItems!.t!.length))).toBe(
      25,
    );
  });

  it('gives up with an error rather than silently dropping items that stay unprocessed', async () => {
    ddb
      .on(BatchWriteCommand)
      .callsFake((input: { RequestItems: Record<string, unknown[]> }) => ({ UnprocessedItems: input.RequestItems }));
    await expect(batchPutAll(table, [{ PK: 'a', SK: 'b' }])).rejects.toThrow(/unprocessed after 8 attempts/);
  });

  it('reads 250 keys in groups of 100 and asks again for unprocessed keys', async () => {
    const keys = Array.from({ length: 250 }, (_, i) => ({ PK: `P${i}`, SK: 'S' }));
    let first = true;
    ddb.on(BatchGetCommand).callsFake((input: { RequestItems: Record<string, { Keys: { PK: string }[] }> }) => {
      const asked = input.RequestItems.t!.Keys;
      if (first) {
        first = false;
        return { Responses: { t: asked.slice(0, 10) }, UnprocessedKeys: { t: { Keys: asked.slice(10) } } };
      }
      return { Responses: { t: asked } };
    });
    const found = await batchGetAll(table, keys);
    expect(found.map((f) => f.PK).sort()).toEqual(keys.map((k) => k.PK).sort());
    expect(
      Math.max(...ddb.commandCalls(BatchGetCommand).map((c) => c.args[0].input.RequestItems!.t!.Keys!.length)),
    ).toBe(100);
  });
});
