import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { TableRef } from '../adapters/dynamo.js';
import { ConcurrentModificationError, EmployeeAlreadyExistsError, NotFoundError } from '../domain/errors.js';
import { batchGetAll } from './batch.js';
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

export type EmployeeReader = Pick<EmployeeRepository, 'getMany'>;

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
                Item: {
                  ...keys.employee(employee.organization_id, employee.employee_id),
                  entity: 'employee',
                  ...employee,
                },
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
        Item: { ...keys.employee(next.organization_id, next.employee_id), entity: 'employee', ...next },
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
                Item: {
                  ...keys.employee(removed.organization_id, removed.employee_id),
                  entity: 'employee',
                  ...removed,
                },
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
