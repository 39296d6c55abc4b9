import { DeleteCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../shared/data/keys.js';
import { describe, expect, it } from 'vitest';
import { yearToDate } from '../../shared/use-cases/paystubs.js';
import { paystubIdFor } from '../../shared/data/paystub-repository.js';
import { drain, payrollBody, payrollWorld, submitRun } from '../support/payroll-fixture.js';

/**
 * Year-to-date ledgers on the real engines: an organization that has had them since its creation writes a ledger
 * line per paystub and nothing else; one created before them gets each new employee-year's ledger filled from the
 * employee index once, so its year-to-date still counts the paystubs written before ledgers existed.
 */
type World = Awaited<ReturnType<typeof payrollWorld>>;

async function run(world: World, body: ReturnType<typeof payrollBody>): Promise<string> {
  const payrollId = await submitRun(world, body, 10);
  expect(await drain(world.services, world.queues.payroll, world.org.organization_id, payrollId)).toBe(0);
  return payrollId;
}

/** Counts the employee-index queries the processor makes while `fn` runs. */
async function indexQueriesDuring(world: World, fn: () => Promise<unknown>): Promise<number> {
  const doc = world.table.doc as unknown as { send: (c: unknown, ...r: unknown[]) => Promise<unknown> };
  const send = doc.send.bind(doc);
  let queries = 0;
  doc.send = (command, ...rest) => {
    if (command instanceof QueryCommand && command.input.IndexName === 'GSI2') queries++;
    return send(command, ...rest);
  };
  try {
    await fn();
  } finally {
    doc.send = send;
  }
  return queries;
}

const november = (ids: string[]) => payrollBody(ids);
const december = (ids: string[]) =>
  payrollBody(ids, { pay_period_start: '2026-11-15', pay_period_end: '2026-11-28', pay_date: '2026-12-04' });

describe('year-to-date ledgers', () => {
  it('writes one ledger line per paystub and queries no index, for an organization that always had ledgers', async () => {
    const world = await payrollWorld(20);
    const orgId = world.org.organization_id;
    await run(world, november(world.employeeIds));
    let second = '';
    const queries = await indexQueriesDuring(world, async () => {
      second = await run(world, december(world.employeeIds));
    });
    expect(queries).toBe(0);
    // Each employee's ledger holds both paystubs of the year, and year-to-date sums them.
    const ledgers = await world.services.paystubs.ledgers(
      orgId,
      world.employeeIds.map((employee_id) => ({ employee_id, pay_date: '2026-12-04' })),
    );
    expect([...ledgers.values()].map((l) => l.size)).toEqual(world.employeeIds.map(() => 2));
    const stubs = await world.services.paystubs.getMany(world.employeeIds.map((id) => paystubIdFor(second, id)));
    const ytd = await yearToDate(world.services, orgId, stubs);
    for (const stub of stubs) expect(ytd.get(stub.paystub_id)!.gross_pay).toBe(2 * stub.gross_pay);
  });

  it('fills a new ledger from the employee index for an organization whose paystubs predate ledgers', async () => {
    const world = await payrollWorld(20);
    const orgId = world.org.organization_id;
    const first = await run(world, november(world.employeeIds));
    // As an organization created before ledgers: its settings without `ytd_ledgers_since`, its first paystubs
    // in no ledger.
    await world.table.doc.send(
      new UpdateCommand({
        TableName: world.table.tableName,
        Key: keys.settings(orgId),
        UpdateExpression: 'REMOVE ytd_ledgers_since',
      }),
    );
    for (const id of world.employeeIds)
      await world.table.doc.send(
        new DeleteCommand({ TableName: world.table.tableName, Key: { PK: `YTD#${id}#2026`, SK: 'YTD' } }),
      );
    const queries = await indexQueriesDuring(world, async () => {
      const second = await run(world, december(world.employeeIds));
      const stubs = await world.services.paystubs.getMany(world.employeeIds.map((id) => paystubIdFor(second, id)));
      const novemberStubs = await world.services.paystubs.getMany(
        world.employeeIds.map((id) => paystubIdFor(first, id)),
      );
      const ytd = await yearToDate(world.services, orgId, stubs);
      for (const stub of stubs) {
        const before = novemberStubs.find((p) => p.employee_id === stub.employee_id)!;
        expect(ytd.get(stub.paystub_id)!.gross_pay).toBe(before.gross_pay + stub.gross_pay);
      }
    });
    // One query per employee-year whose ledger this run created.
    expect(queries).toBe(world.employeeIds.length);
  });
});
