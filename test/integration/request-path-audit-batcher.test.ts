import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { startAuditBatcher } from '../../local/audit-batcher.js';
import { asFunction, guardTable } from '../../local/table-guard.js';
import type { AuditRecord } from '../../shared/adapters/audit-sink.js';
import { AuditRepository } from '../../shared/data/audit-repository.js';
import { keys } from '../../shared/data/keys.js';
import { createTestTable } from '../support/engines.js';

/**
 * The local stack's audit batcher on DynamoDB Local, behind the local table guard as `npm start` runs it: the lines
 * are committed in transactions, and what a reader of the log gets is what the deployed ingestion writes.
 */
const ORG = 'org_batcher';

const line = (i: number, extra: Partial<AuditRecord> = {}): AuditRecord => ({
  request_id: `req-${String(i).padStart(4, '0')}`,
  api_key_id: 'key_1',
  organization_id: ORG,
  method: 'GET',
  path: '/v1/employees/emp_1',
  route: '/v1/employees/{id}',
  status: 200,
  source_ip: '127.0.0.1',
  user_agent: 'test',
  at: new Date(Date.UTC(2026, 10, 25, 12, 0, 0, i)).toISOString(),
  latency_ms: 2,
  auth_failure: null,
  ...extra,
});

async function readAll(repo: AuditRepository): Promise<AuditRecord[]> {
  const out: AuditRecord[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await repo.list(ORG, {}, 100, start);
    out.push(...page.items);
    start = page.lastKey;
  } while (start);
  return out;
}

describe('the local audit batcher on the real engine', () => {
  it("writes lines whose size trigger fired inside a request, outside that request's function grant", async () => {
    const table = await createTestTable('audit-batcher');
    guardTable(table.doc as never);
    const errors: unknown[] = [];
    const batcher = startAuditBatcher(table, { intervalMs: 60_000, maxBatch: 150, onError: (e) => errors.push(e) });
    // Handed over by requests of a function that may not touch the table at all (the docs function's 404s).
    await asFunction('docs', async () => {
      for (let i = 0; i < 150; i++) batcher.sink(line(i));
    });
    // The size trigger has queued the write; a flush joins it rather than starting another.
    await batcher.flush();
    expect(errors).toEqual([]);
    const stored = await readAll(new AuditRepository(table));
    expect(stored.map((r) => r.request_id).sort()).toEqual(
      Array.from({ length: 150 }, (_, i) => `req-${String(i).padStart(4, '0')}`),
    );
    // The items are those the ingestion writes: the organization's log partition, kept 400 days.
    const item = await table.doc.send(
      new GetCommand({ TableName: table.tableName, Key: keys.auditLog(ORG, line(7).at, line(7).request_id) }),
    );
    expect(item.Item).toMatchObject({ entity: 'audit', request_id: 'req-0007', status: 200 });
    expect(item.Item?.ttl).toEqual(expect.any(Number));
    await batcher.stop();
  });

  it('still counts failures no organization owns into their burst line, and writes a line put back twice once', async () => {
    const table = await createTestTable('audit-batcher');
    guardTable(table.doc as never);
    const errors: unknown[] = [];
    const batcher = startAuditBatcher(table, { intervalMs: 60_000, onError: (e) => errors.push(e) });
    for (let i = 0; i < 5; i++)
      batcher.sink(
        line(i, { organization_id: null, api_key_id: null, status: 401, auth_failure: 'The token is unknown' }),
      );
    batcher.sink(line(10));
    batcher.sink(line(10));
    await batcher.stop();
    expect(errors).toEqual([]);
    const burst = await table.doc.send(
      new GetCommand({
        TableName: table.tableName,
        Key: keys.unauthenticatedBurst(line(0).at.slice(0, 16), '127.0.0.1'),
      }),
    );
    expect(burst.Item).toMatchObject({ count: 5 });
    expect((await readAll(new AuditRepository(table))).map((r) => r.request_id)).toEqual(['req-0010']);
  });
});
