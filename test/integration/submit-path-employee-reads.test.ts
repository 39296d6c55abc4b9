import { BatchGetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TableRef } from '../../shared/adapters/dynamo.js';
import { newId } from '../../shared/adapters/ids.js';
import { batchPutAll } from '../../shared/data/batch.js';
import {
  EmployeeRepository,
  type EmployeeEligibility,
  type EmployeeRecord,
  employeeItemOf,
} from '../../shared/data/employee-repository.js';
import { createTestTable } from '../support/engines.js';
import { testEmployee } from '../support/seed.js';

/**
 * The submit path reads a payroll's employees with `eligibility`: ranges of the organization's employee items by
 * Query, BatchGet for what is left. Whatever the shape of the run (most of the organization, a sparse few, ids
 * that cannot exist, another organization's), it must answer exactly what reading each item by key answers, and a
 * dense run must not fall back to one BatchGet per 100 ids.
 */

const ORG = 'org_01kbxsubmitpathreads000000';
const OTHER = 'org_01kbxsubmitpathother000000';
const SIZE = 1_300;

type Kind = 'payable' | 'removed' | 'invalid_account' | 'no_account' | 'legacy_account';

function employeeItem(orgId: string, id: string, i: number, kind: Kind): Record<string, unknown> {
  const bank =
    kind === 'no_account'
      ? null
      : kind === 'invalid_account'
        ? { status: 'invalid' as const, status_reason: 'R03: No account/unable to locate account' }
        : {};
  const removed = kind === 'removed' ? { status: 'removed' as const, removed_at: '2026-01-02T00:00:00.000Z' } : {};
  const item = employeeItemOf(testEmployee(orgId, id, i, bank, { start_date: `2026-0${1 + (i % 9)}-05`, ...removed }));
  // Written before accounts had a status_reason: the attribute is absent, not null.
  if (kind === 'legacy_account') delete (item.bank_account as Record<string, unknown>).status_reason;
  return item;
}

const KINDS: Kind[] = ['payable', 'payable', 'payable', 'removed', 'invalid_account', 'no_account', 'legacy_account'];

/** What eligibility must say of each employee: the fields of the whole item, read by key. */
function expected(records: Map<string, EmployeeRecord>): Map<string, EmployeeEligibility> {
  return new Map(
    [...records].map(([id, e]) => [
      id,
      {
        employee_id: e.employee_id,
        status: e.status,
        start_date: e.start_date,
        bank_account: e.bank_account && { status: e.bank_account.status, status_reason: e.bank_account.status_reason },
      },
    ]),
  );
}

/** The table, with every command it is sent counted and the items each answer carried. */
function counted(table: TableRef) {
  const calls = { query: 0, batchGet: 0, itemsRead: 0 };
  const send = table.doc.send.bind(table.doc);
  const doc = Object.create(table.doc) as TableRef['doc'];
  doc.send = (async (command: unknown) => {
    const out = (await send(command as never)) as { Items?: unknown[]; Responses?: Record<string, unknown[]> };
    if (command instanceof QueryCommand) {
      calls.query++;
      calls.itemsRead += out.Items?.length ?? 0;
    } else if (command instanceof BatchGetCommand) {
      calls.batchGet++;
      calls.itemsRead += Object.values(out.Responses ?? {}).flat().length;
    }
    return out;
  }) as TableRef['doc']['send'];
  return { table: { ...table, doc }, calls };
}

describe('reading a payroll’s employees for eligibility', () => {
  let table: TableRef;
  /** The organization's employee ids, in creation (and key) order. */
  const ids: string[] = [];
  /** The other organization's, created in between: inside every key range of this one's, in another partition. */
  const foreign: string[] = [];

  beforeAll(async () => {
    table = await createTestTable('submit-reads');
    const items: Record<string, unknown>[] = [];
    for (let i = 0; i < SIZE; i++) {
      const id = newId('emp');
      ids.push(id);
      items.push(employeeItem(ORG, id, i, KINDS[i % KINDS.length]!));
      if (i % 100 === 50) {
        const other = newId('emp');
        foreign.push(other);
        items.push(employeeItem(OTHER, other, i, 'payable'));
      }
    }
    await batchPutAll(table, items);
  });

  async function compare(asked: string[]) {
    const repo = new EmployeeRepository(table);
    // getMany is given each id once, as the submit path gives eligibility.
    const truth = expected(await repo.getMany(ORG, [...new Set(asked)]));
    const probe = counted(table);
    const got = await new EmployeeRepository(probe.table).eligibility(ORG, asked);
    expect(new Map([...got].sort())).toEqual(new Map([...truth].sort()));
    return { got, calls: probe.calls };
  }

  it('answers what reading each item by key answers for a run of the whole organization, in a few queries', async () => {
    const { got, calls } = await compare([...ids].reverse());
    expect(got.size).toBe(SIZE);
    // Every kind of employee came back as stored: removed, invalid account (with its reason), no account, an
    // account written before status_reason existed.
    expect(got.get(ids[3]!)!.status).toBe('removed');
    expect(got.get(ids[4]!)!.bank_account).toEqual({
      status: 'invalid',
      status_reason: 'R03: No account/unable to locate account',
    });
    expect(got.get(ids[5]!)!.bank_account).toBeNull();
    expect(got.get(ids[6]!)!.bank_account).toEqual({ status: 'active', status_reason: null });
    // The old path: 13 BatchGets of 100 keys. A dense run reads its ranges, each item once.
    expect(calls.batchGet).toBe(0);
    expect(calls.query).toBeLessThanOrEqual(16);
    expect(calls.itemsRead).toBe(SIZE);
  });

  it('answers the same for ids another organization, nobody, or no well-formed id has, and repeats', async () => {
    const asked = [
      ...ids.slice(200, 900),
      ...foreign,
      newId('emp'),
      'emp_not-a-ulid',
      'emp_ÄÖÜ',
      'x',
      ids[300]!,
      ids[300]!,
    ];
    const { got } = await compare(asked);
    expect(got.size).toBe(700);
    for (const id of foreign) expect(got.has(id)).toBe(false);
  });

  it('falls back to reads by key for a sparse run, reading a bounded number of items', async () => {
    // Every 13th employee: 100 ids spread over the whole organization, 12 of 13 items in their ranges unwanted.
    const asked = ids.filter((_, i) => i % 13 === 0);
    const { got, calls } = await compare(asked);
    expect(got.size).toBe(asked.length);
    expect(calls.batchGet).toBeGreaterThan(0);
    // Each range's first page reads at most twice its ids (and a little more) before it gives up on querying.
    expect(calls.itemsRead).toBeLessThanOrEqual(3 * asked.length + 16 * 8);
  });

  it('reads a handful of ids by key', async () => {
    const { got, calls } = await compare([ids[0]!, ids[650]!, ids[1_299]!, newId('emp')]);
    expect(got.size).toBe(3);
    expect(calls.query).toBe(0);
    expect(calls.batchGet).toBe(1);
  });

  it('reads no employee for no id', async () => {
    const { got, calls } = await compare([]);
    expect(got.size).toBe(0);
    expect(calls.query + calls.batchGet).toBe(0);
  });
});
