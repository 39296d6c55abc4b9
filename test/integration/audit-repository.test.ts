import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../shared/adapters/audit-sink.js';
import { AuditRepository, type AuditFilters } from '../../shared/data/audit-repository.js';
import { keys } from '../../shared/data/keys.js';
import { listLogsQuery } from '../../shared/schemas/audit.js';
import { ingestAuditRecords, listAuditLog } from '../../shared/use-cases/audit.js';
import { createTestTable } from '../support/engines.js';

/** The audit log's storage against DynamoDB Local through the real SDK, each test in its own table. */
const ORG = 'org_audit';

let seq = 0;
function line(at: string, extra: Partial<AuditRecord> = {}): AuditRecord {
  seq++;
  return {
    request_id: `req-${String(seq).padStart(5, '0')}`,
    api_key_id: 'key_admin',
    organization_id: ORG,
    method: 'GET',
    path: '/v1/employees',
    route: '/v1/employees',
    status: 200,
    source_ip: '127.0.0.1',
    user_agent: 'test',
    at,
    latency_ms: 3,
    auth_failure: null,
    ...extra,
  };
}

/** One line every `stepMs` going back from `newest`. */
const series = (
  count: number,
  newest: number,
  stepMs: number,
  extra: (i: number) => Partial<AuditRecord> = () => ({}),
) => Array.from({ length: count }, (_, i) => line(new Date(newest - i * stepMs).toISOString(), extra(i)));

async function all(
  repo: AuditRepository,
  filters: AuditFilters,
  limit: number,
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let start: Record<string, unknown> | undefined;
  let pages = 0;
  do {
    const page = await repo.list(ORG, filters, limit, start);
    ids.push(...page.items.map((r) => r.request_id));
    start = page.lastKey;
    pages++;
  } while (start && pages < 1000);
  return { ids, pages };
}

describe('the audit repository', () => {
  it('keeps one burst line per source and minute for failures no organization owns, counted once however often ingested', async () => {
    const table = await createTestTable('audit');
    const repo = new AuditRepository(table);
    const anonymous = (i: number, ip: string) =>
      line(new Date(Date.UTC(2026, 10, 21, 10, 2, 0, i * 100)).toISOString(), {
        organization_id: null,
        api_key_id: null,
        status: 401,
        source_ip: ip,
        auth_failure: i % 2 ? 'The token is unknown or revoked' : 'Malformed token',
      });
    const attacker = Array.from({ length: 200 }, (_, i) => anonymous(i, '203.0.113.9'));
    const another = Array.from({ length: 3 }, (_, i) => anonymous(i, '198.51.100.7'));
    const owned = line('2026-11-21T10:02:30.000Z');
    // Eight deliveries of 25, as the log subscription sends them; the second and fifth are delivered twice.
    const deliveries = Array.from({ length: 8 }, (_, i) => attacker.slice(i * 25, i * 25 + 25));
    for (const [i, d] of deliveries.entries()) {
      await ingestAuditRecords(repo, i === 0 ? [...d, ...another, owned] : d);
      if (i === 1 || i === 4) await ingestAuditRecords(repo, d);
    }
    const items = (
      await table.doc.send(
        new QueryCommand({
          TableName: table.tableName,
          KeyConditionExpression: 'PK = :pk',
          ExpressionAttributeValues: { ':pk': 'AUDIT#UNAUTHENTICATED#2026-11-21' },
        }),
      )
    ).Items!;
    // 203 failures, 2 items: one per source address in that minute.
    expect(items.map((i) => i.SK).sort()).toEqual([
      '2026-11-21T10:02#burst#198.51.100.7',
      '2026-11-21T10:02#burst#203.0.113.9',
    ]);
    const burst = items.find((i) => i.source_ip === '203.0.113.9')!;
    expect(burst).toMatchObject({
      entity: 'audit_burst',
      count: 200,
      first_at: attacker[0]!.at,
      last_at: attacker[199]!.at,
      statuses: new Set(['401']),
      reasons: new Set(['Malformed token', 'The token is unknown or revoked']),
      methods: new Set(['GET']),
    });
    expect(burst.request_ids).toEqual(new Set(attacker.slice(0, 20).map((r) => r.request_id)));
    expect(burst.ttl).toBe(Math.floor(Date.parse(attacker[0]!.at) / 1000) + 400 * 86_400);
    expect(items.find((i) => i.source_ip === '198.51.100.7')).toMatchObject({ count: 3 });
    // The organization's own line is kept whole, in its log.
    expect((await repo.list(ORG, {}, 10)).items.map((r) => r.request_id)).toEqual([owned.request_id]);
  });

  it("lists an organization's lines newest first across days, in pages that add up to the whole", async () => {
    const table = await createTestTable('audit');
    const repo = new AuditRepository(table);
    // Three days of lines, 7 hours apart, written out of order.
    const lines = series(12, Date.UTC(2026, 10, 21, 20), 7 * 3_600_000);
    await repo.putAll([...lines].reverse());
    const expected = lines.map((l) => l.request_id);
    const one = await repo.list(ORG, {}, 100);
    expect(one.items.map((r) => r.request_id)).toEqual(expected);
    expect(one.lastKey).toBeUndefined();
    const paged = await all(repo, {}, 5);
    expect(paged).toEqual({ ids: expected, pages: 3 });
    // The last page ends the list: no token leading to an empty page.
    const exact = await all(repo, {}, 6);
    expect(exact.pages).toBe(2);
  });

  it('keys each line by its request, so writing it again (a retried delivery) leaves one item', async () => {
    const table = await createTestTable('audit');
    const repo = new AuditRepository(table);
    const l = line('2026-11-21T10:00:00.000Z');
    await repo.putAll([l, l]);
    await repo.putAll([l]);
    const out = await table.doc.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.auditLogPartition(ORG) },
      }),
    );
    expect(out.Items!.length).toBe(1);
    expect(out.Items![0]).toMatchObject({ SK: `${l.at}#${l.request_id}`, ttl: Date.parse(l.at) / 1000 + 400 * 86_400 });
  });

  it("puts failures with no organization in the day's platform partition, out of every organization's log", async () => {
    const table = await createTestTable('audit');
    const repo = new AuditRepository(table);
    const anonymous = line('2026-11-21T23:59:59.999Z', {
      organization_id: null,
      api_key_id: null,
      status: 401,
      auth_failure: 'Unknown token',
    });
    await repo.putAll([anonymous, line('2026-11-21T12:00:00.000Z')]);
    const got = await table.doc.send(
      new GetCommand({
        TableName: table.tableName,
        Key: keys.unauthenticatedAuditLog(anonymous.at, anonymous.request_id),
      }),
    );
    expect(got.Item).toMatchObject({
      PK: 'AUDIT#UNAUTHENTICATED#2026-11-21',
      status: 401,
      auth_failure: 'Unknown token',
    });
    expect((await repo.list(ORG, {}, 100)).items.map((r) => r.status)).toEqual([200]);
  });

  it('filters by key, status and path prefix, and narrows by from/to inclusively, through every page', async () => {
    const table = await createTestTable('audit');
    const repo = new AuditRepository(table);
    const lines = series(60, Date.UTC(2026, 10, 21, 12), 60_000, (i) => ({
      api_key_id: i % 3 === 0 ? 'key_ro' : 'key_admin',
      status: i % 4 === 0 ? 403 : 200,
      path: i % 2 === 0 ? `/v1/employees/emp_${i}` : '/v1/payroll',
    }));
    await repo.putAll(lines);
    const expectIds = (pred: (l: AuditRecord) => boolean) => lines.filter(pred).map((l) => l.request_id);

    expect((await all(repo, { status: 403 }, 4)).ids).toEqual(expectIds((l) => l.status === 403));
    expect((await all(repo, { api_key_id: 'key_ro' }, 7)).ids).toEqual(expectIds((l) => l.api_key_id === 'key_ro'));
    expect((await all(repo, { path_prefix: '/v1/employees' }, 10)).ids).toEqual(
      expectIds((l) => l.path.startsWith('/v1/employees')),
    );
    expect((await all(repo, { api_key_id: 'key_ro', status: 403, path_prefix: '/v1/employees/' }, 2)).ids).toEqual(
      expectIds((l) => l.api_key_id === 'key_ro' && l.status === 403 && l.path.startsWith('/v1/employees/')),
    );

    const from = lines[40]!.at;
    const to = lines[10]!.at;
    expect((await all(repo, { from, to }, 8)).ids).toEqual(lines.slice(10, 41).map((l) => l.request_id));
    expect((await all(repo, { from }, 100)).ids).toEqual(lines.slice(0, 41).map((l) => l.request_id));
    expect((await all(repo, { to }, 100)).ids).toEqual(lines.slice(10).map((l) => l.request_id));
    expect((await all(repo, { from, to, status: 403 }, 3)).ids).toEqual(
      lines
        .slice(10, 41)
        .filter((l) => l.status === 403)
        .map((l) => l.request_id),
    );
  });

  it('reads a whole UTC day for date-only from/to, as the API parses them', async () => {
    const table = await createTestTable('audit');
    const repo = new AuditRepository(table);
    const inDay = [line('2026-11-20T00:00:00.000Z'), line('2026-11-20T23:59:59.999Z')];
    await repo.putAll([line('2026-11-19T23:59:59.999Z'), ...inDay, line('2026-11-21T00:00:00.000Z')]);
    const q = listLogsQuery.parse({ from: '2026-11-20', to: '2026-11-20' });
    expect((await repo.list(ORG, { from: q.from, to: q.to }, 10)).items.map((r) => r.request_id)).toEqual(
      inDay.reverse().map((l) => l.request_id),
    );
    // An offset is converted: 2026-11-20T01:00+02:00 is 2026-11-19T23:00Z.
    expect(listLogsQuery.parse({ from: '2026-11-20T01:00:00+02:00' }).from).toBe('2026-11-19T23:00:00.000Z');
  });

  it('bounds the reading of one page under a rare filter, and still reaches every match through its tokens', async () => {
    const table = await createTestTable('audit');
    // A tiny budget stands in for the real one (10 reads of 1,000 items) over a partition of millions.
    const repo = new AuditRepository(table, { maxReadsPerPage: 2, filteredReadSize: 10 });
    const lines = series(100, Date.UTC(2026, 10, 21, 12), 1_000, (i) => ({ status: i === 5 || i === 95 ? 500 : 200 }));
    await repo.putAll(lines);
    const first = await repo.list(ORG, { status: 500 }, 10);
    // Two reads (eleven items, then ten): the match at 5 is found, and the page stops there with a token.
    expect(first.items.map((r) => r.request_id)).toEqual([lines[5]!.request_id]);
    expect(first.lastKey).toBeDefined();
    const everything = await all(repo, { status: 500 }, 10);
    expect(everything.ids).toEqual([lines[5]!.request_id, lines[95]!.request_id]);
    // 100 items at 21 per page (the page's size plus one, then one step of ten): the fifth page reads the last 16
    // and ends the listing. A budget-bound listing may end with one empty page (a read that stops exactly at the
    // end still gets a LastEvaluatedKey): the price of never reading unboundedly.
    expect(everything.pages).toBe(5);
  });

  it('shows nothing past the 400-day retention, even before TTL has deleted it', async () => {
    const table = await createTestTable('audit');
    const repo = new AuditRepository(table);
    const now = new Date('2026-11-21T12:00:00.000Z');
    const kept = line('2025-10-18T12:00:00.000Z');
    const expired = line('2025-10-16T12:00:00.000Z');
    await ingestAuditRecords(repo, [kept, expired]);
    expect((await listAuditLog(repo, now, ORG, {}, 10)).items.map((r) => r.request_id)).toEqual([kept.request_id]);
    expect(
      (await listAuditLog(repo, now, ORG, { from: '2020-01-01T00:00:00.000Z' }, 10)).items.map((r) => r.request_id),
    ).toEqual([kept.request_id]);
    expect((await listAuditLog(repo, now, ORG, { to: '2025-01-01T00:00:00.000Z' }, 10)).items).toEqual([]);
  });
});
