import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { startDynamoDbLocal } from '../../local/engines/index.js';
import { createDocumentClient } from '../../shared/adapters/dynamo.js';

/**
 * DynamoDB Local on disk, as the local stack runs it: its database file is tuned to a write-ahead log synced at
 * checkpoints (untuned, every item written cost several fsyncs: a 3,000-item batch write took 15-45 s instead of
 * about 2.5), and what was written is there after a restart on the same folder. A change of the engine that breaks
 * the tuning fails here, loudly, instead of silently making the stack ten times slower.
 */
describe('DynamoDB Local on disk', () => {
  it('runs its database file in WAL mode and keeps what was written across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ddb-storage-'));
    try {
      const first = await startDynamoDbLocal({ dbPath: dir });
      expect(first.storage).toEqual({ tuned: true });
      const client = (endpoint: string) =>
        createDocumentClient(
          new DynamoDBClient({
            endpoint,
            region: 'us-east-1',
            credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
          }),
        );
      const doc = client(first.endpoint);
      await doc.send(
        new CreateTableCommand({
          TableName: 'storage-test',
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: 'PK', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'PK', KeyType: 'HASH' }],
        }),
      );
      await doc.send(new PutCommand({ TableName: 'storage-test', Item: { PK: 'a', value: 42 } }));
      // The file format's write version (byte 18 of the header) is 2 in WAL mode, and the log is beside it.
      const file = readdirSync(dir).find((f) => f.endsWith('.db'))!;
      expect(readFileSync(join(dir, file))[18]).toBe(2);
      expect(readdirSync(dir)).toContain(`${file}-wal`);
      await first.stop();

      const second = await startDynamoDbLocal({ dbPath: dir });
      try {
        expect(second.storage).toEqual({ tuned: true });
        const got = await client(second.endpoint).send(new GetCommand({ TableName: 'storage-test', Key: { PK: 'a' } }));
        expect(got.Item).toEqual({ PK: 'a', value: 42 });
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
