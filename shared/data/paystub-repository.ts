import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { TableRef } from '../adapters/dynamo.js';
import { batchGetAll, batchPutAll } from './batch.js';
import { parseItem } from './item.js';
import { keys } from './keys.js';

const cents = z.number().int();

const paystubItem = z.object({
  paystub_id: z.string(),
  organization_id: z.string(),
  employee_id: z.string(),
  payroll_id: z.string(),
  employee_name: z.string(),
  period_start: z.string(),
  period_end: z.string(),
  pay_date: z.string(),
  issued_date: z.string(),
  hours_worked_hundredths: z.number().int(),
  gross_pay: cents,
  bonuses: cents,
  deductions: z.record(z.string(), cents),
  deductions_total: cents,
  net_pay: cents,
  notes: z.string().nullable(),
  payment: z.object({
    method: z.literal('direct_deposit'),
    account_type: z.enum(['checking', 'savings']),
    account_number_last4: z.string(),
    routing_number: z.string(),
    trace_number: z.string().nullable(),
    status: z.enum(['scheduled', 'no_payment', 'returned', 'cancelled']),
  }),
  status: z.enum(['issued', 'voided']),
  created_at: z.string(),
});
export type PaystubRecord = z.infer<typeof paystubItem>;

const parse = (item: Record<string, unknown>) => parseItem(paystubItem, item, 'paystub');

function toItem(p: PaystubRecord): Record<string, unknown> {
  return {
    ...keys.paystub(p.paystub_id),
    entity: 'paystub',
    ...keys.paystubsByPayroll(p.payroll_id),
    GSI1SK: p.paystub_id,
    ...keys.paystubsByEmployee(p.employee_id),
    GSI2SK: `${p.pay_date}#${p.paystub_id}`,
    ...p,
  };
}

export class PaystubRepository {
  constructor(private readonly table: TableRef) {}

  /** Whole, deterministic items: writing a chunk's paystubs twice leaves exactly one paystub per employee. */
  async putAll(paystubs: readonly PaystubRecord[]): Promise<void> {
    await batchPutAll(this.table, paystubs.map(toItem));
  }

  async get(orgId: string, paystubId: string): Promise<PaystubRecord | undefined> {
    const out = await this.table.doc.send(new GetCommand({ TableName: this.table.tableName, Key: keys.paystub(paystubId) }));
    if (!out.Item) return undefined;
    const stub = parse(out.Item);
    // Paystubs do not live under their organization's partition: the organization is checked here, on every read.
    return stub.organization_id === orgId ? stub : undefined;
  }

  async getMany(paystubIds: readonly string[]): Promise<PaystubRecord[]> {
    return (await batchGetAll(this.table, paystubIds.map(keys.paystub))).map(parse);
  }
}
