import { BatchWriteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { createDocumentClient } from '../../shared/adapters/dynamo.js';
import { GSI2 } from '../../shared/data/keys.js';
import { InvalidPageTokenError } from '../../shared/domain/errors.js';
import { TABLE_DEFINITION } from '../../shared/data/table-definition.js';
import { cancelPayroll } from '../../shared/use-cases/cancel-payroll.js';
import { listPaystubs, yearToDate } from '../../shared/use-cases/paystubs.js';
import { chunkSizeFor } from '../../shared/use-cases/process-payroll.js';
import { engineEnvironment } from '../support/engines.js';
import { drain, payrollBody, payrollWorld, paystubItemsOf, submitRun } from '../support/payroll-fixture.js';

/**
 * How paystubs are stored, on the real engines: what a run writes (one batched put per paystub, nothing per paystub
 * beside it, no index key taking more than one paystub of a run, at most two write units each), and that the lists
 * and year-to-date read from that shape stay complete and in contract order.
 */
type World = Awaited<ReturnType<typeof payrollWorld>>;

async function completed(world: World, body: ReturnType<typeof payrollBody>, chunkSize = 10): Promise<string> {
  const payrollId = await submitRun(world, body, chunkSize);
  expect(await drain(world.services, world.queues.payroll, world.org.organization_id, payrollId)).toBe(0);
  expect((await world.services.payrolls.get(world.org.organization_id, payrollId))!.status).toBe('completed');
  return payrollId;
}

/** Every write command the table receives while `fn` runs. */
async function writesDuring(world: World, fn: () => Promise<unknown>): Promise<unknown[]> {
  const doc = world.table.doc as unknown as { send: (c: unknown, ...r: unknown[]) => Promise<unknown> };
  const send = doc.send.bind(doc);
  const seen: unknown[] = [];
  doc.send = (command, ...rest) => {
    if (command instanceof BatchWriteCommand || command instanceof PutCommand || command instanceof UpdateCommand)
      seen.push(command);
    return send(command, ...rest);
  };
  try {
    await fn();
  } finally {
    doc.send = send;
  }
  return seen;
}

/**
 * An item's size as DynamoDB bills it: each attribute's name plus its value (strings by UTF-8 length, numbers by
 * about one byte per two significant digits plus one, maps and lists 3 bytes plus one per element, booleans and
 * nulls 1 byte).
 */
function itemSize(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return Math.ceil(String(Math.abs(value)).replace(/[.-]|^0+/g, '').length / 2) + 1;
  if (typeof value === 'boolean' || value === null) return 1;
  if (value instanceof Set) return [...value].reduce((n: number, v) => n + itemSize(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce((n: number, v) => n + itemSize(v) + 1, 0);
  if (typeof value === 'object')
    return 3 + Object.entries(value as object).reduce((n, [k, v]) => n + Buffer.byteLength(k) + itemSize(v) + 1, 0);
  return 0;
}
const topLevelSize = (item: Record<string, unknown>) =>
  Object.entries(item).reduce((n, [k, v]) => n + Buffer.byteLength(k) + itemSize(v), 0);

/** Write units a put of `item` costs: the table's, plus each index the item has a key in (every index projects ALL). */
function writeUnits(item: Record<string, unknown>): number {
  const units = Math.ceil(topLevelSize(item) / 1024);
  const indexes = TABLE_DEFINITION.globalSecondaryIndexes.filter((i) => item[i.partitionKey] !== undefined);
  return units * (1 + indexes.length);
}

describe('paystub storage', () => {
  it('writes each paystub once, in batches, with no index key taking two of a run and at most 2 write units', async () => {
    const world = await payrollWorld(30);
    let payrollId = '';
    const writes = await writesDuring(world, async () => {
      payrollId = await completed(world, payrollBody(world.employeeIds));
    });
    const stubs = await paystubItemsOf(world.table, payrollId);
    expect(stubs).toHaveLength(30);
    // Nothing is written per paystub beside its put: no ledger line, no counter, no index item of the run.
    const single = writes.filter((c) => !(c instanceof BatchWriteCommand)) as (PutCommand | UpdateCommand)[];
    const perPaystub = single.filter((c) => {
      const pk = String(('Item' in c.input ? c.input.Item?.PK : c.input.Key?.PK) ?? '');
      return !pk.startsWith('ORG#');
    });
    expect(perPaystub.map((c) => JSON.stringify('Item' in c.input ? c.input.Item?.PK : c.input.Key))).toEqual([]);
    const batched = (writes as BatchWriteCommand[])
      .filter((c) => c instanceof BatchWriteCommand)
      .flatMap((c) => Object.values(c.input.RequestItems ?? {}).flat())
      .map((r) => r.PutRequest?.Item as Record<string, unknown>);
    expect(batched.filter((i) => i.entity === 'paystub')).toHaveLength(30);
    // Each index key of a run's paystubs is distinct: a 25,000-employee run presses on no partition key.
    for (const index of TABLE_DEFINITION.globalSecondaryIndexes) {
      const values = stubs.map((s) => (s as Record<string, unknown>)[index.partitionKey]).filter(Boolean);
      expect(new Set(values).size, index.indexName).toBe(values.length);
    }
    expect(new Set(stubs.map((s) => (s as Record<string, unknown>).PK)).size).toBe(30);
    // The table and the employee index: two write units for each of these paystubs.
    expect(TABLE_DEFINITION.globalSecondaryIndexes.map((i) => i.indexName)).toEqual([GSI2.name]);
    expect(Math.max(...stubs.map((s) => writeUnits(s as Record<string, unknown>)))).toBe(2);
  });

  it('lists runs and the organization in contract order, whole, across pages and runs sharing a pay date', async () => {
    const world = await payrollWorld(12);
    const orgId = world.org.organization_id;
    const ids = world.employeeIds;
    const runs = [
      await completed(world, payrollBody(ids)),
      // Two off-cycle runs on one later pay date: their paystubs interleave by id in the list.
      await completed(world, payrollBody(ids.slice(0, 7), { type: 'off_cycle', pay_date: '2026-11-27' }), 3),
      await completed(world, payrollBody(ids.slice(3), { type: 'off_cycle', pay_date: '2026-11-27' }), 4),
      // The next period: what a date range tells apart from the others.
      await completed(
        world,
        payrollBody(ids.slice(0, 2), {
          pay_period_start: '2026-11-15',
          pay_period_end: '2026-11-28',
          pay_date: '2026-12-04',
        }),
      ),
    ];
    // A cancelled run's paystubs stay listed, voided.
    await cancelPayroll(world.services, 'sandbox', orgId, runs[2]!);
    const byRun = await Promise.all(runs.map((r) => paystubItemsOf(world.table, r)));
    const inOrder = (stubs: (typeof byRun)[number]) =>
      [...stubs]
        .sort((a, b) =>
          a.pay_date !== b.pay_date ? (a.pay_date < b.pay_date ? 1 : -1) : a.paystub_id < b.paystub_id ? -1 : 1,
        )
        .map((p) => p.paystub_id);
    const truth = inOrder(byRun.flat());
    expect(truth).toHaveLength(12 + 7 + 9 + 2);

    const all = async (filters: Parameters<typeof listPaystubs>[2], limit: number) => {
      const out: string[] = [];
      let start: Record<string, unknown> | undefined;
      let pages = 0;
      do {
        const page = await listPaystubs(world.services, orgId, filters, limit, start);
        out.push(...page.items.map((p) => p.paystub_id));
        start = page.lastKey;
        pages++;
      } while (start && pages < 100);
      return { out, pages };
    };
    const everything = await all({}, 5);
    expect(everything.out).toEqual(truth);
    expect(everything.pages).toBe(Math.ceil(truth.length / 5));
    // By run: exactly that run's paystubs, in id order (its entries' order).
    expect((await all({ payrollId: runs[1]! }, 4)).out).toEqual(inOrder(byRun[1]!));
    // A date range selects by period, whole runs at a time; both ends inclusive.
    const november = inOrder(byRun.slice(0, 3).flat());
    expect((await all({ from: '2026-11-10', to: '2026-11-12' }, 50)).out).toEqual(november);
    expect((await all({ to: '2026-11-14' }, 7)).out).toEqual(november);
    expect((await all({ from: '2026-11-15' }, 50)).out).toEqual(inOrder(byRun[3]!));
    expect((await all({ from: '2026-11-14', to: '2026-11-15' }, 50)).out).toEqual(truth);
    expect((await all({ from: '2026-11-29' }, 50)).out).toEqual([]);
    // By employee: the employee index, still newest pay date first.
    const fourth = byRun.flat().filter((p) => p.employee_id === ids[4]);
    expect((await all({ employeeId: ids[4]! }, 1)).out).toEqual(inOrder(fourth));
    expect(fourth).toHaveLength(3);
    // By run and employee.
    expect((await all({ payrollId: runs[0]!, employeeId: ids[4]! }, 10)).out).toHaveLength(1);
    // A cursor of another shape (an index key, as tokens issued before lists were read run by run) is refused.
    await expect(
      listPaystubs(world.services, orgId, {}, 5, { GSI3PK: `ORG#${orgId}#STUBS`, GSI3SK: 'x', PK: 'x', SK: 'x' }),
    ).rejects.toBeInstanceOf(InvalidPageTokenError);
  });

  it('sums year-to-date from the employee index: completed runs only, as of each pay date, nothing written for it', async () => {
    const world = await payrollWorld(6);
    const orgId = world.org.organization_id;
    const ids = world.employeeIds;
    const december = await completed(
      world,
      payrollBody(ids, { pay_period_start: '2026-11-15', pay_period_end: '2026-11-28', pay_date: '2026-12-04' }),
    );
    // An earlier pay date processed later counts in December's year-to-date, not the other way round.
    const november = await completed(world, payrollBody(ids));
    const extra = await completed(world, payrollBody(ids, { type: 'off_cycle', pay_date: '2026-12-04' }));
    const stubsOf = async (payrollId: string) =>
      (await paystubItemsOf(world.table, payrollId)).sort((a, b) => (a.employee_id < b.employee_id ? -1 : 1));
    const [dec, nov, off] = await Promise.all([stubsOf(december), stubsOf(november), stubsOf(extra)]);
    const ytdOf = async (stubs: typeof dec) => yearToDate(world.services, orgId, stubs);
    let ytd = await ytdOf([...dec, ...nov]);
    for (const stub of nov) expect(ytd.get(stub.paystub_id)!.gross_pay).toBe(stub.gross_pay);
    for (const [i, stub] of dec.entries()) {
      const sameDay = off[i]!.paystub_id < stub.paystub_id ? off[i]!.gross_pay : 0;
      expect(ytd.get(stub.paystub_id)!.gross_pay).toBe(nov[i]!.gross_pay + stub.gross_pay + sameDay);
    }
    // A cancelled run leaves every year-to-date it was part of.
    await cancelPayroll(world.services, 'sandbox', orgId, extra);
    ytd = await ytdOf(dec);
    for (const [i, stub] of dec.entries())
      expect(ytd.get(stub.paystub_id)!.gross_pay).toBe(nov[i]!.gross_pay + stub.gross_pay);
  });
});

describe('chunks', () => {
  it('cuts a run into about ten chunks, so its chunks run in parallel and its progress moves every tenth', async () => {
    const world = await payrollWorld(250);
    const orgId = world.org.organization_id;
    // The configured size (1,000, the default) is only a cap: 250 entries make 10 chunks of 25.
    const payrollId = await completed(world, payrollBody(world.employeeIds), 1000);
    const record = (await world.services.payrolls.get(orgId, payrollId))!;
    expect([record.chunk_count, record.chunk_size, record.chunks_done.size]).toEqual([10, 25, 10]);
    expect(await paystubItemsOf(world.table, payrollId)).toHaveLength(250);
    expect([chunkSizeFor(1000, 10_000), chunkSizeFor(1000, 25_000), chunkSizeFor(1000, 7), chunkSizeFor(2, 7)]).toEqual(
      [1000, 1000, 25, 2],
    );
  });
});

describe('the DynamoDB client', () => {
  it('writes nothing of a failed call to the console (the SDK would log its whole input: names, emails, accounts)', async () => {
    const world = await payrollWorld(0);
    // The client every function builds by default, pointed at the test engine as the SDK reads it from the environment.
    const saved = { ...process.env };
    Object.assign(process.env, engineEnvironment());
    const table = { doc: createDocumentClient(), tableName: world.table.tableName };
    const spies = [
      vi.spyOn(console, 'error'),
      vi.spyOn(console, 'warn'),
      vi.spyOn(console, 'info'),
      vi.spyOn(console, 'log'),
    ];
    try {
      const put = () =>
        table.doc.send(
          new PutCommand({
            TableName: table.tableName,
            Item: { PK: 'LOG#1', SK: 'x', email: 'ada@example.com' },
            ConditionExpression: 'attribute_not_exists(PK)',
          }),
        );
      await put();
      await expect(put()).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of spies) spy.mockRestore();
      process.env = saved;
    }
  });
});
