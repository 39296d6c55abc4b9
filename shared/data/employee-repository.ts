import { GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { TableRef } from '../adapters/dynamo.js';
import { isWellFormedId } from '../adapters/ids.js';
import { ConcurrentModificationError, EmployeeAlreadyExistsError, NotFoundError } from '../domain/errors.js';
import { batchGetAll, inParallel } from './batch.js';
import { cancelledConditions, parseItem, type TransactItems } from './item.js';
import { keys } from './keys.js';
import { queryPage, type Page } from './paginate.js';

const storedBankAccount = z.object({
  account_type: z.enum(['checking', 'savings']),
  routing_number: z.string(),
  account_number_last4: z.string(),
  /** Envelope-encrypted full account number; never leaves the service except inside a NACHA file. */
  account_number_ciphertext: z.string(),
  /** `invalid`: the bank returned a deposit to it as closed, missing or invalid (R02, R03, R04). */
  status: z.enum(['active', 'invalid']),
  /** Why it is `invalid`: the return that made it so. */
  status_reason: z.string().nullable().default(null),
  /** When a bank's notification of change last corrected it. */
  corrected_at: z.string().nullable().default(null),
  /** Names this account (a new one each time an account is set): a payment records which account it went to. */
  account_ref: z.string().nullable().default(null),
});
export type StoredBankAccount = z.infer<typeof storedBankAccount>;

const employeeItem = z.object({
  employee_id: z.string(),
  organization_id: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string(),
  employment_type: z.string(),
  pay_group: z.string(),
  pay_schedule: z.string(),
  start_date: z.string(),
  status: z.enum(['active', 'removed']),
  bank_account: storedBankAccount.nullable(),
  version: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  removed_at: z.string().nullable().default(null),
});
export type EmployeeRecord = z.infer<typeof employeeItem>;

const parse = (item: Record<string, unknown>) => parseItem(employeeItem, item, 'employee');

/** An employee as the table stores it: its keys, its entity, its fields. */
export const employeeItemOf = (e: EmployeeRecord): Record<string, unknown> => ({
  ...keys.employee(e.organization_id, e.employee_id),
  entity: 'employee',
  ...e,
});

/**
 * What deciding whether an employee can be paid needs (CONTRACT §5): current or removed, since when, and whether
 * the bank account on file takes deposits. A payroll's employees are read in this shape alone, a small part of each
 * item (no names, no account number ciphertext).
 */
export interface EmployeeEligibility {
  employee_id: string;
  status: EmployeeRecord['status'];
  start_date: string;
  bank_account: Pick<StoredBankAccount, 'status' | 'status_reason'> | null;
}

const EMPLOYEE_STATUSES: ReadonlySet<unknown> = new Set(employeeItem.shape.status.options);
const ACCOUNT_STATUSES: ReadonlySet<unknown> = new Set(storedBankAccount.shape.status.options);

/**
 * The projection of an employee item (or the whole item) checked as `parseItem` checks a whole one, by hand: a
 * 10,000-employee run reads 10,000 of them on the way to its 202, and a schema library's parse cost more there
 * than the reads it follows.
 */
function parseEligibility(item: Record<string, unknown>): EmployeeEligibility {
  const { employee_id, status, start_date } = item;
  // Projected from a null bank_account, the path yields nothing: no account on file.
  const account = (item.bank_account ?? null) as { status?: unknown; status_reason?: unknown } | null;
  const reason = account?.status_reason ?? null;
  const bad = [
    typeof employee_id !== 'string' && 'employee_id',
    !EMPLOYEE_STATUSES.has(status) && 'status',
    typeof start_date !== 'string' && 'start_date',
    account !== null && typeof account !== 'object' && 'bank_account',
    account !== null && !ACCOUNT_STATUSES.has(account.status) && 'bank_account.status',
    reason !== null && typeof reason !== 'string' && 'bank_account.status_reason',
  ].filter(Boolean);
  if (bad.length > 0) throw new Error(`Stored employee item does not match its schema: ${bad.join(', ')}`);
  return {
    employee_id: employee_id as string,
    status: status as EmployeeEligibility['status'],
    start_date: start_date as string,
    bank_account: account && {
      status: account.status as StoredBankAccount['status'],
      status_reason: reason as string | null,
    },
  };
}

/** The projection of `EmployeeEligibility` (`status` is a reserved word). */
const ELIGIBILITY_PROJECTION = {
  ProjectionExpression: 'employee_id, #status, start_date, bank_account.#status, bank_account.status_reason',
  ExpressionAttributeNames: { '#status': 'status' },
};

/** Ids read together by one range query of `eligibility`; more go to several ranges read side by side. */
const RANGE_MIN_IDS = 100;
const RANGES_IN_FLIGHT = 8;

export type EmployeeReader = Pick<EmployeeRepository, 'getMany' | 'eligibility'>;

export class EmployeeRepository {
  constructor(private readonly table: TableRef) {}

  /** The employee and its email-uniqueness item are written together; the second's condition is the uniqueness rule. */
  async create(employee: EmployeeRecord): Promise<void> {
    const t = this.table.tableName;
    try {
      await this.table.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: t,
                Item: employeeItemOf(employee),
                ConditionExpression: 'attribute_not_exists(PK)',
              },
            },
            {
              Put: {
                TableName: t,
                Item: {
                  ...keys.employeeEmail(employee.organization_id, employee.email),
                  entity: 'employee_email',
                  employee_id: employee.employee_id,
                },
                ConditionExpression: 'attribute_not_exists(PK)',
              },
            },
          ],
        }),
      );
    } catch (err) {
      if (cancelledConditions(err)?.[1]) throw new EmployeeAlreadyExistsError();
      throw err;
    }
  }

  /** Any employee of the organization, removed ones included (their paystubs stay readable). */
  async get(orgId: string, employeeId: string): Promise<EmployeeRecord | undefined> {
    const out = await this.table.doc.send(
      new GetCommand({ TableName: this.table.tableName, Key: keys.employee(orgId, employeeId), ConsistentRead: true }),
    );
    return out.Item ? parse(out.Item) : undefined;
  }

  /** Many employees of one organization by id, in batched reads; ids not found are simply absent. */
  async getMany(orgId: string, employeeIds: readonly string[]): Promise<Map<string, EmployeeRecord>> {
    const items = await batchGetAll(
      this.table,
      employeeIds.map((id) => keys.employee(orgId, id)),
    );
    return new Map(
      items.map((item) => {
        const e = parse(item);
        return [e.employee_id, e];
      }),
    );
  }

  /**
   * The eligibility of many employees of one organization by id; ids not found are simply absent. What `getMany`
   * reads with one BatchGet per 100 ids, this reads with as few round trips as the ids allow: a payroll pays most
   * of an organization, and employee ids are time-ordered (ULIDs), so the ids asked for cover long runs of the
   * organization's employee items. They are sorted and cut into at most 8 key ranges read side by side, each
   * with a paginated consistent Query of the projection alone (10,000 ids: 8 queries instead of 100 BatchGets).
   *
   * A range may also hold employees nobody asked for (a run of 1,000 spread over an organization of 25,000). Each
   * page asks for at most twice the ids still wanted in its range, and a page in which fewer than half the items
   * were asked for ends the query: the range's remaining ids are read with BatchGet. So a sparse run reads at most
   * about three items per id, and a dense one reads each of its items once, in as many round trips as 1 MB pages
   * allow. Ids that are not well-formed employee ids (no employee has one) are read with BatchGet too, which keeps
   * the range arithmetic on plain ASCII, where string order is DynamoDB's byte order.
   */
  async eligibility(orgId: string, employeeIds: readonly string[]): Promise<Map<string, EmployeeEligibility>> {
    const unique = [...new Set(employeeIds)];
    const ranged = unique.filter((id) => isWellFormedId(id, 'emp')).sort();
    const direct = unique.filter((id) => !isWellFormedId(id, 'emp'));
    const found = new Map<string, EmployeeEligibility>();
    const keep = (item: Record<string, unknown>) => {
      const e = parseEligibility(item);
      found.set(e.employee_id, e);
    };
    if (ranged.length < RANGE_MIN_IDS) {
      direct.push(...ranged);
      ranged.length = 0;
    }
    const rangeCount = Math.min(RANGES_IN_FLIGHT, Math.ceil(ranged.length / RANGE_MIN_IDS));
    const size = Math.ceil(ranged.length / rangeCount);
    const ranges = Array.from({ length: rangeCount }, (_, i) => ranged.slice(i * size, (i + 1) * size)).filter(
      (r) => r.length > 0,
    );
    await Promise.all([
      inParallel(ranges, RANGES_IN_FLIGHT, async (ids) => {
        for (const item of await this.readRange(orgId, ids)) keep(item);
      }),
      direct.length > 0
        ? batchGetAll(
            this.table,
            direct.map((id) => keys.employee(orgId, id)),
          ).then((items) => items.forEach(keep))
        : undefined,
    ]);
    return found;
  }

  /**
   * The items of `ids` (sorted, well-formed) by a Query of the key range from the first to the last, falling back
   * to BatchGet for what is left once a page turns out sparse (see `eligibility`).
   */
  private async readRange(orgId: string, ids: readonly string[]): Promise<Record<string, unknown>[]> {
    const wanted = new Set(ids);
    const items: Record<string, unknown>[] = [];
    let next = 0;
    let startKey: Record<string, unknown> | undefined;
    for (;;) {
      const out = await this.table.doc.send(
        new QueryCommand({
          TableName: this.table.tableName,
          KeyConditionExpression: 'PK = :pk AND SK BETWEEN :first AND :last',
          ExpressionAttributeValues: {
            ':pk': keys.orgPartition(orgId),
            ':first': keys.employee(orgId, ids[0]!).SK,
            ':last': keys.employee(orgId, ids.at(-1)!).SK,
          },
          ...ELIGIBILITY_PROJECTION,
          ConsistentRead: true,
          Limit: 2 * (ids.length - next) + 16,
          ExclusiveStartKey: startKey,
        }),
      );
      const page = out.Items ?? [];
      let hits = 0;
      for (const item of page) {
        if (!wanted.has(item.employee_id as string)) continue;
        hits++;
        items.push(item);
      }
      startKey = out.LastEvaluatedKey;
      if (!startKey) return items;
      // The ids past where this page stopped are the ones still to read.
      const reached = startKey.SK as string;
      while (next < ids.length && keys.employee(orgId, ids[next]!).SK <= reached) next++;
      if (next === ids.length) return items;
      if (hits * 2 < page.length) {
        const rest = await batchGetAll(
          this.table,
          ids.slice(next).map((id) => keys.employee(orgId, id)),
        );
        return items.concat(rest);
      }
    }
  }

  async getActive(orgId: string, employeeId: string): Promise<EmployeeRecord> {
    const employee = await this.get(orgId, employeeId);
    if (employee?.status !== 'active') throw new NotFoundError();
    return employee;
  }

  async listActive(orgId: string, limit: number, startKey?: Record<string, unknown>): Promise<Page<EmployeeRecord>> {
    return queryPage(
      this.table,
      {
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        FilterExpression: '#status = :active',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':pk': keys.orgPartition(orgId),
          ':prefix': keys.employeePrefix,
          ':active': 'active',
        },
      },
      limit,
      startKey,
      parse,
    );
  }

  /**
   * Replaces the employee if nobody changed it since `previous` was read (optimistic concurrency on `version`),
   * moving the email-uniqueness item when the email changes. Throws ConcurrentModificationError on a lost race,
   * which the use case answers by reading again and re-applying the patch.
   */
  async replace(previous: EmployeeRecord, next: EmployeeRecord): Promise<void> {
    const t = this.table.tableName;
    const emailChanged = previous.email.toLowerCase() !== next.email.toLowerCase();
    const items: TransactItems = [this.replaceItem(previous, next)];
    if (emailChanged) {
      items.push(
        {
          Put: {
            TableName: t,
            Item: {
              ...keys.employeeEmail(next.organization_id, next.email),
              entity: 'employee_email',
              employee_id: next.employee_id,
            },
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
        {
          Delete: {
            TableName: t,
            Key: keys.employeeEmail(previous.organization_id, previous.email),
            ConditionExpression: 'employee_id = :id',
            ExpressionAttributeValues: { ':id': previous.employee_id },
          },
        },
      );
    }
    try {
      await this.table.doc.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (err) {
      const failed = cancelledConditions(err);
      if (failed?.[0]) throw new ConcurrentModificationError();
      if (failed?.[1]) throw new EmployeeAlreadyExistsError();
      throw err;
    }
  }

  /** The write of `replace` for a transaction of its own: only if nobody changed the employee since `previous`. */
  replaceItem(previous: EmployeeRecord, next: EmployeeRecord): TransactItems[number] {
    return {
      Put: {
        TableName: this.table.tableName,
        Item: employeeItemOf(next),
        ConditionExpression: 'version = :version AND #status = :active',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':version': previous.version, ':active': 'active' },
      },
    };
  }

  /** Removal keeps the record (paystubs refer to it) and frees the email for a new onboarding. */
  async remove(previous: EmployeeRecord, removed: EmployeeRecord): Promise<void> {
    const t = this.table.tableName;
    try {
      await this.table.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: t,
                Item: employeeItemOf(removed),
                ConditionExpression: 'version = :version AND #status = :active',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: { ':version': previous.version, ':active': 'active' },
              },
            },
            {
              Delete: {
                TableName: t,
                Key: keys.employeeEmail(previous.organization_id, previous.email),
                ConditionExpression: 'employee_id = :id',
                ExpressionAttributeValues: { ':id': previous.employee_id },
              },
            },
          ],
        }),
      );
    } catch (err) {
      if (cancelledConditions(err)?.[0]) throw new ConcurrentModificationError();
      throw err;
    }
  }
}
