import { GetCommand, UpdateCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { TableRef } from '../adapters/dynamo.js';
import { deterministicId } from '../adapters/ids.js';
import { batchGetAll, batchPutAll, inParallel } from './batch.js';
import { isConditionalCheckFailure, parseItem, type TransactItems } from './item.js';
import { GSI1, GSI2, GSI3, descendingDate, keys, type Key } from './keys.js';
import { queryPage, type Page } from './paginate.js';

const cents = z.number().int();

const paymentReturn = z.object({ code: z.string(), reason: z.string(), returned_at: z.string() });
const paymentCorrection = z.object({
  code: z.string(),
  received_at: z.string(),
  /** Whether the employee's account was changed (it was still the account the deposit went to). */
  applied: z.boolean(),
});
export type PaymentReturn = z.infer<typeof paymentReturn>;
export type PaymentCorrection = z.infer<typeof paymentCorrection>;

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
    /** The day the deposit settles (null: nothing was paid, or a paystub written before the field existed). */
    effective_entry_date: z.string().nullable().default(null),
    /** The employee's `bank_account.account_ref` the deposit went to (internal: never answered). */
    account_ref: z.string().nullable().optional(),
    /** Set once, by the bank's return of the deposit. */
    return: paymentReturn.optional(),
    /** Set once, by the bank's notification of change about the account the deposit went to. */
    correction: paymentCorrection.optional(),
  }),
  status: z.enum(['issued', 'voided']),
  created_at: z.string(),
});
export type PaystubRecord = z.infer<typeof paystubItem>;

/** A paystub's id is derived from its run and employee: a re-run writes the same paystub, never a second one. */
export function paystubIdFor(payrollId: string, employeeId: string): string {
  return deterministicId('stub', payrollId, employeeId);
}

const parse = (item: Record<string, unknown>) => parseItem(paystubItem, item, 'paystub');

/** Sort key of the employee and organization indexes: pay date descending, then paystub id ascending. */
const dateOrder = (p: Pick<PaystubRecord, 'pay_date' | 'paystub_id'>) =>
  `${descendingDate(p.pay_date)}#${p.paystub_id}`;

function toItem(p: PaystubRecord): Record<string, unknown> {
  return {
    ...keys.paystub(p.paystub_id),
    entity: 'paystub',
    GSI1PK: keys.paystubsByPayroll(p.payroll_id),
    GSI1SK: p.paystub_id,
    GSI2PK: keys.paystubsByEmployee(p.employee_id),
    GSI2SK: dateOrder(p),
    GSI3PK: keys.paystubsByOrganization(p.organization_id),
    GSI3SK: dateOrder(p),
    ...p,
  };
}

export interface PaystubFilters {
  employeeId?: string;
  payrollId?: string;
  from?: string;
  to?: string;
}

/**
 * How far a paystub's pay date may sit from its period, over every run the organization has processed: the pay
 * date is never before the period start (validated), at most `after_start` days after it, and at most
 * `before_end` days before the period end. With them a date-range query becomes a key range on the pay date.
 */
export interface DateBounds {
  after_start: number;
  before_end: number;
}

const DAY_MS = 86_400_000;
const shift = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
const daysBetween = (a: string, b: string) =>
  Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS);

/** A paystub's line in its employee's ledger of the year: what year-to-date totals are summed from. */
export interface LedgerLine {
  pay_date: string;
  payroll_id: string;
  gross_pay: number;
  bonuses: number;
  deductions: number;
  net_pay: number;
}
const ledgerLine = z.object({
  pay_date: z.string(),
  payroll_id: z.string(),
  gross_pay: cents,
  bonuses: cents,
  deductions: cents,
  net_pay: cents,
});
const ledgerItem = z.object({ organization_id: z.string() });
export type Ledger = Map<string, LedgerLine>;

/** The line a paystub contributes to its employee's ledger of the year. */
export const ledgerLineOf = (p: PaystubRecord): LedgerLine => ({
  pay_date: p.pay_date,
  payroll_id: p.payroll_id,
  gross_pay: p.gross_pay,
  bonuses: p.bonuses,
  deductions: p.deductions_total,
  net_pay: p.net_pay,
});

const ledgerKeyOf = (p: Pick<PaystubRecord, 'employee_id' | 'pay_date'>) =>
  keys.yearToDate(p.employee_id, p.pay_date.slice(0, 4));

export class PaystubRepository {
  constructor(private readonly table: TableRef) {}

  /** Whole, deterministic items: writing a chunk's paystubs twice leaves exactly one paystub per employee. */
  async putAll(paystubs: readonly PaystubRecord[]): Promise<void> {
    await batchPutAll(this.table, paystubs.map(toItem));
  }

  /**
   * The write that marks a paystub's payment returned, for a transaction: only once (a second return of the same
   * deposit fails the condition, and its transaction with it), only the payment that carried this trace number, and
   * only while it is `scheduled`.
   */
  returnItem(p: PaystubRecord, returned: PaymentReturn): TransactItems[number] {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.paystub(p.paystub_id),
        UpdateExpression: 'SET payment.#status = :returned, payment.#return = :return',
        // Only a deposit still out: not one returned already, nor one whose run was cancelled in the meantime.
        ConditionExpression: 'payment.trace_number = :trace AND payment.#status = :scheduled',
        ExpressionAttributeNames: { '#status': 'status', '#return': 'return' },
        ExpressionAttributeValues: {
          ':returned': 'returned',
          ':scheduled': 'scheduled',
          ':return': returned,
          ':trace': p.payment.trace_number,
        },
      },
    };
  }

  /** The write that records a notification of change on the payment it is about: only the first one. */
  correctionItem(p: PaystubRecord, correction: PaymentCorrection): TransactItems[number] {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.paystub(p.paystub_id),
        UpdateExpression: 'SET payment.correction = :correction',
        ConditionExpression: 'payment.trace_number = :trace AND attribute_not_exists(payment.correction)',
        ExpressionAttributeValues: { ':correction': correction, ':trace': p.payment.trace_number },
      },
    };
  }

  /**
   * Adds paystubs to their employees' ledgers of the year, one atomic update each (16 at a time), so runs of one
   * employee written at once never lose each other's lines; adding a line twice changes nothing. Each line is an
   * attribute of its own (`L#<paystub id>`), so no map has to exist first. A ledger created here is filled with
   * the employee's paystubs of that year written before ledgers existed, from the employee index (one query, once
   * per employee and year; empty for an employee with no earlier paystub), unless `fillFromIndex` is off: an
   * organization that has had ledgers since its creation (`ytd_ledgers_since`) has no paystub outside them, and a
   * query per new employee-year made a 1,000-entry run take 14.5 s instead of about 3.
   */
  async addToLedgers(
    paystubs: readonly PaystubRecord[],
    options: { fillFromIndex: boolean } = { fillFromIndex: true },
  ): Promise<void> {
    await inParallel(paystubs, 16, async (p) => {
      const out = await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: ledgerKeyOf(p),
          UpdateExpression: 'SET organization_id = :org, entity = :entity, #line = :line',
          ExpressionAttributeNames: { '#line': `L#${p.paystub_id}` },
          ExpressionAttributeValues: { ':org': p.organization_id, ':entity': 'ytd_ledger', ':line': ledgerLineOf(p) },
          ReturnValues: 'UPDATED_OLD',
        }),
      );
      if (out.Attributes?.organization_id !== undefined || !options.fillFromIndex) return;
      const year = p.pay_date.slice(0, 4);
      const older = await this.yearOf(p.organization_id, p.employee_id, { pay_date: `${year}-12-31`, paystub_id: '~' });
      await inParallel(
        older.filter((o) => o.status === 'issued' && o.paystub_id !== p.paystub_id),
        4,
        async (o) => {
          await this.table.doc.send(
            new UpdateCommand({
              TableName: this.table.tableName,
              Key: ledgerKeyOf(o),
              UpdateExpression: 'SET #line = if_not_exists(#line, :line)',
              ExpressionAttributeNames: { '#line': `L#${o.paystub_id}` },
              ExpressionAttributeValues: { ':line': ledgerLineOf(o) },
            }),
          );
        },
      );
    });
  }

  /** The ledgers of these employees' years, by `<employee>#<year>`: one batched read for a page of paystubs. */
  async ledgers(
    orgId: string,
    of: readonly Pick<PaystubRecord, 'employee_id' | 'pay_date'>[],
  ): Promise<Map<string, Ledger>> {
    const wanted = new Map(of.map((p) => [`${p.employee_id}#${p.pay_date.slice(0, 4)}`, ledgerKeyOf(p)]));
    const items = await batchGetAll(this.table, [...wanted.values()]);
    const out = new Map<string, Ledger>();
    for (const item of items) {
      if (parseItem(ledgerItem, item, 'year-to-date ledger').organization_id !== orgId) continue;
      const [, employee, year] = String(item.PK).split('#');
      const lines = Object.entries(item)
        .filter(([name]) => name.startsWith('L#'))
        .map(([name, line]): [string, LedgerLine] => [
          name.slice(2),
          parseItem(ledgerLine, line as Record<string, unknown>, 'ledger line'),
        ]);
      out.set(`${employee}#${year}`, new Map(lines));
    }
    return out;
  }

  /**
   * Voids paystubs in place (16 at a time), never from a copy read earlier: a payment still `scheduled` becomes
   * `cancelled`; a returned one, or one with nothing to pay, keeps its payment. Ids with no paystub are skipped.
   * Returns how many were voided.
   */
  async voidAll(paystubIds: readonly string[]): Promise<number> {
    let voided = 0;
    await inParallel(paystubIds, 16, async (id) => {
      const stub = (await this.voidOne(id, true)) ?? (await this.voidOne(id, false));
      if (!stub) return;
      voided++;
      // A voided paystub leaves its employee's year-to-date: the ledger line goes with it.
      await this.table.doc
        .send(
          new UpdateCommand({
            TableName: this.table.tableName,
            Key: ledgerKeyOf(stub),
            UpdateExpression: 'REMOVE #line',
            ConditionExpression: 'attribute_exists(PK)',
            ExpressionAttributeNames: { '#line': `L#${stub.paystub_id}` },
          }),
        )
        .catch((err) => {
          if (!isConditionalCheckFailure(err)) throw err;
        });
    });
    return voided;
  }

  /**
   * Marks one paystub voided; `withPayment`: only if its payment is still `scheduled`, which becomes `cancelled`.
   * The paystub as it now stands, or undefined when the condition failed (or there is no such paystub).
   */
  private async voidOne(id: string, withPayment: boolean): Promise<PaystubRecord | undefined> {
    try {
      const out = await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.paystub(id),
          UpdateExpression: withPayment
            ? 'SET #status = :voided, payment.#status = :cancelled'
            : 'SET #status = :voided',
          ConditionExpression: withPayment
            ? 'attribute_exists(PK) AND payment.#status = :scheduled'
            : 'attribute_exists(PK)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':voided': 'voided',
            ...(withPayment && { ':cancelled': 'cancelled', ':scheduled': 'scheduled' }),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return parse(out.Attributes!);
    } catch (err) {
      if (isConditionalCheckFailure(err)) return undefined;
      throw err;
    }
  }

  async get(orgId: string, paystubId: string): Promise<PaystubRecord | undefined> {
    const out = await this.table.doc.send(
      new GetCommand({ TableName: this.table.tableName, Key: keys.paystub(paystubId) }),
    );
    if (!out.Item) return undefined;
    const stub = parse(out.Item);
    // Paystubs do not live under their organization's partition: the organization is checked here, on every read.
    return stub.organization_id === orgId ? stub : undefined;
  }

  async getMany(paystubIds: readonly string[]): Promise<PaystubRecord[]> {
    return (await batchGetAll(this.table, paystubIds.map(keys.paystub))).map(parse);
  }

  /**
   * Widens the organization's date bounds to cover a run about to write paystubs. Done before its paystubs exist,
   * so a date query never misses one. Only ever grows (each bound a conditional max).
   */
  async widenDateBounds(
    orgId: string,
    run: { pay_period_start: string; pay_period_end: string; pay_date: string },
  ): Promise<void> {
    const wanted: DateBounds = {
      after_start: daysBetween(run.pay_period_start, run.pay_date),
      before_end: Math.max(0, daysBetween(run.pay_date, run.pay_period_end)),
    };
    await Promise.all(
      (Object.keys(wanted) as (keyof DateBounds)[]).map(async (name) => {
        try {
          await this.table.doc.send(
            new UpdateCommand({
              TableName: this.table.tableName,
              Key: keys.paystubDateBounds(orgId),
              UpdateExpression: 'SET #b = :v, entity = :entity',
              ConditionExpression: 'attribute_not_exists(#b) OR #b < :v',
              ExpressionAttributeNames: { '#b': name },
              ExpressionAttributeValues: { ':v': wanted[name], ':entity': 'paystub_bounds' },
            }),
          );
        } catch (err) {
          if (!isConditionalCheckFailure(err)) throw err;
        }
      }),
    );
  }

  async dateBounds(orgId: string): Promise<DateBounds> {
    const out = await this.table.doc.send(
      new GetCommand({ TableName: this.table.tableName, Key: keys.paystubDateBounds(orgId), ConsistentRead: true }),
    );
    return { after_start: Number(out.Item?.after_start ?? 0), before_end: Number(out.Item?.before_end ?? 0) };
  }

  /**
   * One page of an organization's paystubs, filters combined with AND, always from a key or an index: by payroll
   * (GSI1), else by employee (GSI2), else by the organization's date index (GSI3), the other filters applied to
   * that narrow read. `from`/`to` select paystubs whose period overlaps [from, to]; order is pay date descending,
   * then paystub id.
   */
  /**
   * Whether the filter's run and employee are the organization's. The indexes by run and by employee hold every
   * organization's paystubs, so an id of another organization is answered (with nothing) without reading its
   * index partition: how long the answer takes says nothing about another organization's runs.
   */
  private async filterIdsOwned(orgId: string, f: PaystubFilters): Promise<boolean> {
    const owners = [
      f.payrollId && keys.payroll(orgId, f.payrollId),
      f.employeeId && keys.employee(orgId, f.employeeId),
    ].filter((k): k is Key => Boolean(k));
    const found = await Promise.all(
      owners.map((Key) =>
        this.table.doc.send(new GetCommand({ TableName: this.table.tableName, Key, ProjectionExpression: 'PK' })),
      ),
    );
    return found.every((out) => out.Item !== undefined);
  }

  async list(
    orgId: string,
    f: PaystubFilters,
    limit: number,
    startKey?: Record<string, unknown>,
  ): Promise<Page<PaystubRecord>> {
    if (!(await this.filterIdsOwned(orgId, f))) return { items: [] };
    const names: Record<string, string> = { '#org': 'organization_id' };
    const values: Record<string, unknown> = { ':org': orgId };
    const filters = ['#org = :org'];
    if (f.from) {
      filters.push('period_end >= :from');
      values[':from'] = f.from;
    }
    if (f.to) {
      filters.push('period_start <= :to');
      values[':to'] = f.to;
    }
    let query: Omit<QueryCommandInput, 'TableName' | 'Limit' | 'ExclusiveStartKey'>;
    if (f.payrollId) {
      values[':pk'] = keys.paystubsByPayroll(f.payrollId);
      if (f.employeeId) {
        filters.push('employee_id = :employee');
        values[':employee'] = f.employeeId;
      }
      query = { IndexName: GSI1.name, KeyConditionExpression: `${GSI1.pk} = :pk` };
    } else {
      const index = f.employeeId ? GSI2 : GSI3;
      values[':pk'] = f.employeeId ? keys.paystubsByEmployee(f.employeeId) : keys.paystubsByOrganization(orgId);
      let key = `${index.pk} = :pk`;
      if (f.from || f.to) {
        // Overlap with [from, to] bounds the pay date: from − before_end ≤ pay_date ≤ to + after_start.
        const bounds = await this.dateBounds(orgId);
        const conditions: string[] = [];
        if (f.to) {
          values[':newest'] = descendingDate(shift(f.to, bounds.after_start));
          conditions.push(`${index.sk} >= :newest`);
        }
        if (f.from) {
          values[':oldest'] = `${descendingDate(shift(f.from, -bounds.before_end))}#~`;
          conditions.push(`${index.sk} <= :oldest`);
        }
        key += conditions.length === 2 ? ` AND ${index.sk} BETWEEN :newest AND :oldest` : ` AND ${conditions[0]}`;
      }
      query = { IndexName: index.name, KeyConditionExpression: key };
    }
    return queryPage(
      this.table,
      {
        ...query,
        FilterExpression: filters.join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
      limit,
      startKey,
      parse,
    );
  }

  /** The employee's paystubs of a calendar year up to and including `upTo` (by pay date, then id). */
  async yearOf(
    orgId: string,
    employeeId: string,
    upTo: Pick<PaystubRecord, 'pay_date' | 'paystub_id'>,
  ): Promise<PaystubRecord[]> {
    const out: PaystubRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await queryPage(
        this.table,
        {
          IndexName: GSI2.name,
          KeyConditionExpression: `${GSI2.pk} = :pk AND ${GSI2.sk} BETWEEN :from AND :to`,
          FilterExpression: 'organization_id = :org',
          ExpressionAttributeValues: {
            ':pk': keys.paystubsByEmployee(employeeId),
            ':org': orgId,
            ':from': `${descendingDate(upTo.pay_date)}#`,
            ':to': `${descendingDate(`${upTo.pay_date.slice(0, 4)}-01-01`)}#~`,
          },
        },
        100,
        start,
        parse,
      );
      out.push(...page.items);
      start = page.lastKey;
    } while (start);
    return out.filter((p) => p.pay_date < upTo.pay_date || p.paystub_id <= upTo.paystub_id);
  }
}
