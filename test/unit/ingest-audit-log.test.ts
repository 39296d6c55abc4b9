import { gzipSync } from 'node:zlib';
import { BatchWriteCommand, DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CloudWatchLogsEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuditRecord } from '../../shared/adapters/audit-sink.js';
import { resetConfigForTests } from '../../shared/config/env.js';

/**
 * The deployed ingestion: a real CloudWatch Logs subscription payload (gzip, base64) of Powertools JSON lines in,
 * BatchWriteItem out, with DynamoDB replaced by aws-sdk-client-mock.
 */
const ddb = mockClient(DynamoDBDocumentClient);
const TABLE = 'audit-unit-table';

beforeAll(() => {
  process.env.TABLE_NAME = TABLE;
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  resetConfigForTests();
});
afterEach(() => ddb.reset());

const handler = () => import('../../functions/audit/ingest-audit-log.js').then((m) => m.handler);

function record(i: number, extra: Partial<AuditRecord> = {}): AuditRecord {
  return {
    request_id: `req-${i}`,
    api_key_id: 'key_1',
    organization_id: 'org_1',
    method: 'GET',
    path: `/v1/employees/emp_${i}`,
    route: '/v1/employees/{id}',
    status: 200,
    source_ip: '203.0.113.7',
    user_agent: 'curl/8.5.0',
    at: new Date(Date.UTC(2026, 10, 21, 10, 0, 0, i)).toISOString(),
    latency_ms: 12,
    auth_failure: null,
    ...extra,
  };
}

/** A Powertools line as the Logger writes it for `logger.info('audit', { audit_event: 'request', audit })`. */
const powertoolsLine = (audit: unknown) =>
  JSON.stringify({
    level: 'INFO',
    message: 'audit',
    timestamp: '2026-11-21T10:00:00.000Z',
    service: 'payroll-api',
    cold_start: false,
    request_id: 'x',
    audit_event: 'request',
    audit,
  });

function subscriptionEvent(messages: string[], messageType = 'DATA_MESSAGE'): CloudWatchLogsEvent {
  const payload = {
    messageType,
    owner: '123456789012',
    logGroup: '/aws/lambda/Payroll-sandbox-dev-Api-ListEmployees',
    logStream: '2026/11/21/[$LATEST]abc',
    subscriptionFilters: ['audit-log'],
    logEvents: messages.map((message, i) => ({ id: String(1000 + i), timestamp: Date.UTC(2026, 10, 21), message })),
  };
  return { awslogs: { data: gzipSync(Buffer.from(JSON.stringify(payload))).toString('base64') } };
}

type Written = { PK: string; SK: string; ttl: number; entity: string } & AuditRecord;
const written = (): Written[] =>
  ddb
    .commandCalls(BatchWriteCommand)
    .flatMap((c) => c.args[0].input.RequestItems![TABLE]!.map((r) => r.PutRequest!.Item as Written));

describe('the audit ingest function', () => {
  it('writes every audit line of a delivery, keyed by organization and time, with a 400-day TTL', async () => {
    ddb.on(BatchWriteCommand).resolves({});
    const records = Array.from({ length: 30 }, (_, i) => record(i));
    const unauthenticated = record(99, {
      api_key_id: null,
      organization_id: null,
      status: 401,
      auth_failure: 'Unknown token',
    });
    ddb.on(UpdateCommand).resolves({ Attributes: { count: 1 } });
    const out = await (await handler())(subscriptionEvent([...records, unauthenticated].map(powertoolsLine)));
    expect(out).toEqual({ ingested: 31 });
    const items = written();
    expect(items.length).toBe(30);
    const first = items.find((i) => i.request_id === 'req-0')!;
    expect(first).toMatchObject({
      PK: 'AUDIT#ORG#org_1',
      SK: `${records[0]!.at}#req-0`,
      entity: 'audit',
      ...records[0],
    });
    expect(first.ttl).toBe(Math.floor(Date.parse(records[0]!.at) / 1000) + 400 * 86_400);
    // The failure no organization owns is counted into its source's burst line for the minute, not stored alone.
    expect(items.find((i) => i.request_id === 'req-99')).toBeUndefined();
    const [count, sample] = ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input);
    expect(count).toMatchObject({
      Key: {
        PK: 'AUDIT#UNAUTHENTICATED#2026-11-21',
        SK: `${unauthenticated.at.slice(0, 16)}#burst#${unauthenticated.source_ip}`,
      },
    });
    expect(count!.ExpressionAttributeValues).toMatchObject({ ':n': 1, ':reasons': new Set(['Unknown token']) });
    expect(sample!.ExpressionAttributeValues).toEqual({ ':ids': new Set(['req-99']) });
    // 30 items: one group of 25 and one of 5.
    expect(
      ddb
        .commandCalls(BatchWriteCommand)
        .map((c) => c.args[0].input.RequestItems![TABLE]!.length)
        .sort(),
    ).toEqual([25, 5]);
  });

  it('retries the items DynamoDB leaves unprocessed until every one is written', async () => {
    let calls = 0;
    ddb.on(BatchWriteCommand).callsFake((input: { RequestItems: Record<string, unknown[]> }) => {
      calls++;
      const requests = input.RequestItems[TABLE]!;
      // The first answer leaves all but the first item unprocessed, as a throttled partition does.
      return calls === 1 ? { UnprocessedItems: { [TABLE]: requests.slice(1) } } : {};
    });
    await (await handler())(subscriptionEvent([1, 2, 3, 4].map((i) => powertoolsLine(record(i)))));
    expect(ddb.commandCalls(BatchWriteCommand).length).toBe(2);
    expect(ddb.commandCalls(BatchWriteCommand)[1]!.args[0].input.RequestItems![TABLE]!.length).toBe(3);
    expect(new Set(written().map((i) => i.request_id))).toEqual(new Set(['req-1', 'req-2', 'req-3', 'req-4']));
  });

  it('throws when the write fails, so the delivery is retried and then parked rather than lost', async () => {
    ddb
      .on(BatchWriteCommand)
      .rejects(Object.assign(new Error('Throughput exceeded'), { name: 'ProvisionedThroughputExceededException' }));
    await expect((await handler())(subscriptionEvent([powertoolsLine(record(1))]))).rejects.toThrow(
      /Throughput exceeded/,
    );
  });

  it('throws when items stay unprocessed, rather than dropping them', async () => {
    ddb
      .on(BatchWriteCommand)
      .callsFake((input: { RequestItems: Record<string, unknown[]> }) => ({ UnprocessedItems: input.RequestItems }));
    await expect((await handler())(subscriptionEvent([powertoolsLine(record(1))]))).rejects.toThrow(/unprocessed/);
  }, 20_000);

  it('skips what is not a valid audit line, and writes the rest', async () => {
    ddb.on(BatchWriteCommand).resolves({});
    const messages = [
      'START RequestId: 6c1f Version: $LATEST',
      JSON.stringify({ level: 'INFO', message: 'request', status: 200 }),
      powertoolsLine({ ...record(1), status: 'ok' }),
      powertoolsLine({ ...record(2), at: 'yesterday' }),
      powertoolsLine(record(3)),
    ];
    expect(await (await handler())(subscriptionEvent(messages))).toEqual({ ingested: 1 });
    expect(written().map((i) => i.request_id)).toEqual(['req-3']);
  });

  it('writes a line delivered twice (a retried delivery) as one item', async () => {
    ddb.on(BatchWriteCommand).resolves({});
    const line = powertoolsLine(record(7));
    await (await handler())(subscriptionEvent([line, line]));
    expect(written().length).toBe(1);
  });

  it('scrubs a token or an account number a client put in the path before it is stored', async () => {
    ddb.on(BatchWriteCommand).resolves({});
    const token = `pk_sandbox_${'a1B2'.repeat(10)}xyz`;
    await (await handler())(
      subscriptionEvent([
        powertoolsLine(record(1, { path: `/v1/employees/${token}`, status: 404 })),
        powertoolsLine(
          record(2, { path: '/v1/employees/987654321012', status: 404, user_agent: `bot ${token} 123456789012` }),
        ),
      ]),
    );
    const text = JSON.stringify(written());
    expect(text).not.toContain(token);
    expect(text).not.toContain('987654321012');
    expect(text).not.toContain('123456789012');
    expect(
      written()
        .map((i) => i.path)
        .sort(),
    ).toEqual(['/v1/employees/[redacted]', '/v1/employees/[redacted]']);
  });

  it("reads exactly what the request path's default sink writes to the log, and the subscription filter selects it", async () => {
    ddb.on(BatchWriteCommand).resolves({});
    const [{ emitAudit }, { logger }] = await Promise.all([
      import('../../shared/adapters/audit-sink.js'),
      import('../../shared/adapters/logger.js'),
    ]);
    const lines: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    logger.setLogLevel('INFO');
    try {
      emitAudit(record(42));
    } finally {
      logger.setLogLevel('SILENT');
      write.mockRestore();
    }
    const emitted = lines.join('').trim().split('\n');
    expect(emitted.length).toBe(1);
    // What `{ $.audit_event = "request" }` tests, on the line as written.
    expect(JSON.parse(emitted[0]!).audit_event).toBe('request');
    expect(await (await handler())(subscriptionEvent(emitted))).toEqual({ ingested: 1 });
    expect(written()[0]).toMatchObject(record(42));
  });

  it('does nothing for the control message CloudWatch Logs sends when the subscription is created', async () => {
    const out = await (await handler())(
      subscriptionEvent(['CWL CONTROL MESSAGE: Checking health of destination Lambda function.'], 'CONTROL_MESSAGE'),
    );
    expect(out).toEqual({ ingested: 0 });
    expect(ddb.commandCalls(BatchWriteCommand).length).toBe(0);
  });

  it('refuses a payload that is not a CloudWatch Logs delivery', async () => {
    await expect(
      (await handler())({ awslogs: { data: Buffer.from('not gzip').toString('base64') } }),
    ).rejects.toThrow();
  });
});
