import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startAuditBatcher } from '../../local/audit-batcher.js';
import type { AuditRecord } from '../../shared/adapters/audit-sink.js';

/** The local stack's audit sink: buffered, never blocking, flushed by time, size and stop, and retried on failure. */
const ddb = mockClient(DynamoDBDocumentClient);
const table = { doc: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' })), tableName: 't' };
afterEach(() => ddb.reset());

const record = (i: number): AuditRecord => ({
  request_id: `req-${i}`,
  api_key_id: 'key_1',
  organization_id: 'org_1',
  method: 'GET',
  path: '/v1/employees',
  route: '/v1/employees',
  status: 200,
  source_ip: '127.0.0.1',
  user_agent: null,
  at: new Date(Date.UTC(2026, 10, 21, 0, 0, 0, i)).toISOString(),
  latency_ms: 1,
  auth_failure: null,
});
/** Lines are committed in transactions of up to 100 puts (see local/audit-batcher.ts). */
const transactions = () => ddb.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems!);
const writtenIds = () => transactions().flatMap((items) => items.map((t) => (t.Put!.Item as AuditRecord).request_id));

async function until(condition: () => boolean, ms = 5_000): Promise<void> {
  await vi.waitFor(
    () => {
      if (!condition()) throw new Error(`condition not met in ${ms} ms`);
    },
    { timeout: ms, interval: 5 },
  );
}

describe('the local audit batcher', () => {
  it('returns at once and writes on the next tick', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    const batcher = startAuditBatcher(table, { intervalMs: 20 });
    batcher.sink(record(1));
    expect(ddb.commandCalls(TransactWriteCommand).length).toBe(0);
    await until(() => writtenIds().length === 1);
    await batcher.stop();
  });

  it('writes as soon as the buffer holds a full batch, without waiting for the timer', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    const batcher = startAuditBatcher(table, { intervalMs: 60_000, maxBatch: 100 });
    for (let i = 0; i < 99; i++) batcher.sink(record(i));
    await new Promise((r) => setTimeout(r, 20));
    expect(writtenIds().length).toBe(0);
    batcher.sink(record(99));
    await until(() => writtenIds().length === 100);
    await batcher.stop();
  });

  it('writes what is left when stopped', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    const batcher = startAuditBatcher(table, { intervalMs: 60_000 });
    for (let i = 0; i < 7; i++) batcher.sink(record(i));
    await batcher.stop();
    expect(new Set(writtenIds())).toEqual(new Set(Array.from({ length: 7 }, (_, i) => `req-${i}`)));
  });

  it('keeps the lines of a failed write and writes them on a later tick', async () => {
    const errors: unknown[] = [];
    ddb.on(TransactWriteCommand).rejectsOnce(new Error('engine down')).resolves({});
    const batcher = startAuditBatcher(table, { intervalMs: 10, onError: (e) => errors.push(e) });
    batcher.sink(record(1));
    batcher.sink(record(2));
    await until(() => transactions().length >= 2);
    await batcher.stop();
    expect(errors.map(String)).toEqual(['Error: engine down']);
    // The second call carries both lines again.
    expect(transactions()[1]!.length).toBe(2);
  });

  it('commits the lines of one write in transactions of up to 100 puts, not in groups of 25', async () => {
    ddb.on(TransactWriteCommand).resolves({});
    const batcher = startAuditBatcher(table, { intervalMs: 60_000, maxBatch: 1_000 });
    for (let i = 0; i < 250; i++) batcher.sink(record(i));
    await batcher.flush();
    expect(transactions().map((items) => items.length)).toEqual([100, 100, 50]);
    expect(new Set(writtenIds()).size).toBe(250);
    // The items are the ingestion's own: the organization's log partition, with their expiry.
    expect(transactions()[0]![0]!.Put).toMatchObject({
      TableName: 't',
      Item: { PK: 'AUDIT#ORG#org_1', entity: 'audit', request_id: 'req-0' },
    });
    expect(transactions()[0]![0]!.Put!.Item).toHaveProperty('ttl');
    await batcher.stop();
  });
});
