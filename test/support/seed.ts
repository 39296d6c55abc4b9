import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { createDocumentClient, type TableRef } from '../../shared/adapters/dynamo.js';
import { FieldEncryptor, LocalDataKeyProvider } from '../../shared/adapters/envelope-encryption.js';
import { newId } from '../../shared/adapters/ids.js';
import { ObjectStore } from '../../shared/adapters/object-store.js';
import { batchPutAll } from '../../shared/data/batch.js';
import { type EmployeeRecord, employeeItemOf } from '../../shared/data/employee-repository.js';
import { localSecrets } from '../../local/stack-state.js';
import type { RunningStack } from './local-stack.js';

/** Large organizations for the benchmarks and the crash test: written straight into a running stack's table. */
/** Clients of a running stack's own engines. */
export function seedClients(stack: RunningStack) {
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const table: TableRef = {
    doc: createDocumentClient(
      new DynamoDBClient({ endpoint: stack.state.dynamodb_endpoint, region: stack.state.region, credentials }),
    ),
    tableName: stack.state.table_name,
  };
  const objects = new ObjectStore(
    new S3Client({ endpoint: stack.state.s3_endpoint, region: stack.state.region, credentials, forcePathStyle: true }),
    stack.state.bucket,
  );
  return { table, objects };
}

/** Employees written straight into the table in the service's own item shape: seeding is not what is measured. */
export async function seedEmployees(
  stack: RunningStack,
  table: TableRef,
  orgId: string,
  count: number,
): Promise<string[]> {
  const encryptor = new FieldEncryptor(new LocalDataKeyProvider(localSecrets(stack.dir).master_key));
  const items: Record<string, unknown>[] = [];
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = newId('emp');
    ids.push(id);
    const account = String(100_000_000 + i);
    items.push(
      employeeItemOf(
        testEmployee(orgId, id, i, {
          account_number_last4: account.slice(-4),
          account_number_ciphertext: await encryptor.encrypt(account, orgId),
        }),
      ),
    );
  }
  await batchPutAll(table, items);
  return ids;
}

/** A run of `ids` in the `period`-th fortnight of 2026 (each period its own window). */
export function payrollBodyFor(ids: string[], period: number) {
  const start = new Date(Date.UTC(2026, 1, 1 + 14 * period));
  const iso = (d: Date) => d.toISOString().slice(0, 10);
  return {
    pay_period_start: iso(start),
    pay_period_end: iso(new Date(start.getTime() + 13 * 86_400_000)),
    pay_date: iso(new Date(start.getTime() + 18 * 86_400_000)),
    employees: ids.map((id, i) => ({
      employee_id: id,
      gross_pay: (2000 + (i % 500)).toFixed(2),
      hours_worked: 80,
      bonuses: i % 4 ? 0 : 125.5,
      deductions: { taxes: 412.37, benefits: 88, retirement: '60.00' },
    })),
  };
}

/**
 * An active employee with a checking account that takes deposits, as the service would store it: the one builder
 * behind every employee the tests and benchmarks write straight into a table. `bank` replaces fields of the account
 * (`null`: no account on file); `overrides`, fields of the employee.
 */
export function testEmployee(
  orgId: string,
  id: string,
  i: number,
  bank: Partial<NonNullable<EmployeeRecord['bank_account']>> | null = {},
  overrides: Partial<EmployeeRecord> = {},
): EmployeeRecord {
  const at = '2026-01-02T00:00:00.000Z';
  return {
    employee_id: id,
    organization_id: orgId,
    first_name: 'Test',
    last_name: `Worker ${i}`,
    email: `worker${i}@example.com`,
    employment_type: 'full_time',
    pay_group: 'default',
    pay_schedule: 'biweekly',
    start_date: '2026-01-05',
    status: 'active',
    bank_account: bank && {
      account_type: 'checking',
      routing_number: '021000021',
      account_number_last4: '6789',
      account_number_ciphertext: `ciphertext-${i}`,
      status: 'active',
      status_reason: null,
      corrected_at: null,
      account_ref: null,
      ...bank,
    },
    version: 1,
    created_at: at,
    updated_at: at,
    removed_at: null,
    ...overrides,
  };
}
