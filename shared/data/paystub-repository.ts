import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { TableRef } from '../adapters/dynamo.js';
import { deterministicId } from '../adapters/ids.js';
import { batchGetAll, batchPutAll, inParallel } from './batch.js';
import { isConditionalCheckFailure, parseItem, type TransactItems } from './item.js';
import { GSI2, descendingDate, keys, type Key } from './keys.js';
import { queryPage, type Page } from './paginate.js';

const cents = z.number().int();

/** A payment's life: scheduled, then maybe returned by the bank, or reversed by the originator (CONTRACT §10, §12). */
export const PAYMENT_STATUSES = [
  'scheduled',
  'no_payment',
  'returned',
  'cancelled',
  'reversal_scheduled',
  'reversal_returned',
] as const;

const paymentReturn = z.object({ code: z.string(), reason: z.string(), returned_at: z.string() });
const paymentCorrection = z.object({
  code: z.string(),
  received_at: z.string(),
  /** Whether the employee's account was changed (it was still the account the deposit went to). */
  applied: z.boolean(),
});
const paymentReversal = z.object({
  reason: z.string(),
  file_id: z.string(),
  trace_number: z.string(),
  effective_entry_date: z.string(),
  scheduled_at: z.string(),
  /** The bank's return of the reversal debit (the money did not come back). */
  return: paymentReturn.optional(),
});
export type PaymentReturn = z.infer<typeof paymentReturn>;
export type PaymentReversal = z.infer<typeof paymentReversal>;
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
    status: z.enum(PAYMENT_STATUSES),
    /** The day the deposit settles (null: nothing was paid, or a paystub written before the field existed). */
    effective_entry_date: z.string().nullable().default(null),
    /** The employee's `bank_account.account_ref` the deposit went to (internal: never answered). */
    account_ref: z.string().nullable().optional(),
    /** Set once, by the bank's return of the deposit. */
    return: paymentReturn.optional(),
    /** Set once, by the bank's notification of change about the account the deposit went to. */
    correction: paymentCorrection.optional(),
    /** Set once, when the payment is reversed (POST /v1/payroll/{id}/reversals). */
    reversal: paymentReversal.optional(),
  }),
  status: z.enum(['issued', 'voided']),
  created_at: z.string(),
});
export type PaystubRecord = z.infer<typeof paystubItem>;

/** What year-to-date needs of a paystub. */
const yearLine = paystubItem.pick({
  paystub_id: true,
  payroll_id: true,
  pay_date: true,
  status: true,
  gross_pay: true,
  bonuses: true,
  deductions_total: true,
  net_pay: true,
});
export type YearLine = z.infer<typeof yearLine>;
const YEAR_LINE_FIELDS = [
  'paystub_id',
  'payroll_id',
  'pay_date',
  '#status',
  'gross_pay',
  'bonuses',
  'deductions_total',
  'net_pay',
];

/**
 * How a run names its paystubs. `entry` (every run planned since): `stub_`, then 18 characters of a digest of the
 * run, then the entry's index in the submission in 8 characters. A run's ids are known from its size alone and sort
 * in submission order, so the list of a run's paystubs is a range of primary keys (no index keyed by the run, which
 * a 25,000-employee run would press past a partition's 1,000 writes a second), and the organization's list is its
 * runs' ranges. `employee` (runs planned before): a digest of run and employee, found through the run's stored list
 * of employees.
 */
export type PaystubNaming = 'entry' | 'employee';

const RUN_PART = 18;
const INDEX_PART = 26 - RUN_PART;
const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/** The entry index in INDEX_PART Crockford characters: ids of one run sort as their entries do. */
function encodeIndex(index: number): string {
  let out = '';
  for (let rest = index; out.length < INDEX_PART; rest = Math.floor(rest / 32)) out = CROCKFORD[rest % 32] + out;
  return out;
}

/** The part every paystub id of an entry-named run begins with. */
export const runPrefixOf = (payrollId: string) => deterministicId('stub', payrollId).slice(0, 5 + RUN_PART);

/** A run's paystub of entry `index` (employee `employeeId`): a re-run writes the same paystub, never a second one. */
export function paystubIdOf(
  run: { payroll_id: string; paystub_naming?: PaystubNaming | undefined },
  index: number,
  employeeId: string,
): string {
  return run.paystub_naming === 'entry'
    ? entryPaystubId(run.payroll_id, index)
    : deterministicId('stub', run.payroll_id, employeeId);
}

/** The paystub of entry `index` of a run whose paystubs are named by entry. */
export const entryPaystubId = (payrollId: string, index: number) => `${runPrefixOf(payrollId)}${encodeIndex(index)}`;

/** The entry index of an entry-named paystub id (its last INDEX_PART characters). */
export function entryIndexOf(paystubId: string): number {
  let index = 0;
  for (const c of paystubId.slice(-INDEX_PART)) index = index * 32 + CROCKFORD.indexOf(c);
  return index;
}

const parse = (item: Record<string, unknown>) => parseItem(paystubItem, item, 'paystub');

/** Sort key of the employee and organization indexes: pay date descending, then paystub id ascending. */
const dateOrder = (p: Pick<PaystubRecord, 'pay_date' | 'paystub_id'>) =>
  `${descendingDate(p.pay_date)}#${p.paystub_id}`;

function toItem(p: PaystubRecord): Record<string, unknown> {
  return {
    ...keys.paystub(p.paystub_id),
    entity: 'paystub',
    GSI2PK: keys.paystubsByEmployee(p.employee_id),
    GSI2SK: dateOrder(p),
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
    // A deposit reversed since: the bank returned the credit anyway (the account was closed). The return is recorded
    // and the payment keeps its reversal status, so the reversal debit's own return that follows is no surprise.
    const reversed = p.payment.status === 'reversal_scheduled' || p.payment.status === 'reversal_returned';
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.paystub(p.paystub_id),
        UpdateExpression: reversed
          ? 'SET payment.#return = :return'
          : 'SET payment.#status = :returned, payment.#return = :return',
        // Only a deposit still out: not one returned already, nor one whose run was cancelled in the meantime.
        ConditionExpression: reversed
          ? 'payment.trace_number = :trace AND payment.#status IN (:reversing, :reversalReturned) AND attribute_not_exists(payment.#return)'
          : 'payment.trace_number = :trace AND payment.#status = :scheduled',
        ExpressionAttributeNames: { '#status': 'status', '#return': 'return' },
        ExpressionAttributeValues: reversed
          ? {
              ':reversing': 'reversal_scheduled',
              ':reversalReturned': 'reversal_returned',
              ':return': returned,
              ':trace': p.payment.trace_number,
            }
          : {
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
            : 'attribute_exists(PK) AND #status <> :voided',
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
   * Whether the filter's run and employee are the organization's. The employee index holds every organization's
   * paystubs, so an id of another organization is answered (with nothing) without reading its index partition:
   * how long the answer takes says nothing about another organization's employees.
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

  /**
   * One page of an employee's paystubs (the employee index, pay date descending, then paystub id), the run and date
   * filters applied to that narrow read: `from`/`to` select paystubs whose period overlaps [from, to], as a key
   * range on the pay date widened by the organization's date bounds.
   */
  async listByEmployee(
    orgId: string,
    f: PaystubFilters & { employeeId: string },
    limit: number,
    startKey?: Record<string, unknown>,
  ): Promise<Page<PaystubRecord>> {
    if (!(await this.filterIdsOwned(orgId, f))) return { items: [] };
    const filters = ['organization_id = :org'];
    const values: Record<string, unknown> = { ':org': orgId, ':pk': keys.paystubsByEmployee(f.employeeId) };
    if (f.payrollId) {
      filters.push('payroll_id = :payroll');
      values[':payroll'] = f.payrollId;
    }
    if (f.from) {
      filters.push('period_end >= :from');
      values[':from'] = f.from;
    }
    if (f.to) {
      filters.push('period_start <= :to');
      values[':to'] = f.to;
    }
    let key = `${GSI2.pk} = :pk`;
    if (f.from || f.to) {
      // Overlap with [from, to] bounds the pay date: from − before_end ≤ pay_date ≤ to + after_start.
      const bounds = await this.dateBounds(orgId);
      const conditions: string[] = [];
      if (f.to) {
        values[':newest'] = descendingDate(shift(f.to, bounds.after_start));
        conditions.push(`${GSI2.sk} >= :newest`);
      }
      if (f.from) {
        values[':oldest'] = `${descendingDate(shift(f.from, -bounds.before_end))}#~`;
        conditions.push(`${GSI2.sk} <= :oldest`);
      }
      key += conditions.length === 2 ? ` AND ${GSI2.sk} BETWEEN :newest AND :oldest` : ` AND ${conditions[0]}`;
    }
    return queryPage(
      this.table,
      {
        IndexName: GSI2.name,
        KeyConditionExpression: key,
        FilterExpression: filters.join(' AND '),
        ExpressionAttributeValues: values,
      },
      limit,
      startKey,
      parse,
    );
  }

  /**
   * The first `limit` paystubs that exist among `candidates` (ids in list order), read by primary key in batches
   * of 100 from the organization's: at most `maxReads` batches, so candidates with no paystub (entries of a run
   * cancelled before they were written) cannot turn a page into an unbounded read. `examined`: how many candidates
   * were looked at, the last of them where the next page starts when the page came back short.
   */
  async firstExisting(
    orgId: string,
    candidates: Iterator<string>,
    limit: number,
    maxReads = 10,
  ): Promise<{ items: PaystubRecord[]; last?: string; exhausted: boolean }> {
    const items: PaystubRecord[] = [];
    let last: string | undefined;
    for (let reads = 0; items.length < limit && reads < maxReads; reads++) {
      // The first read asks for the page; candidates with no paystub are read past 100 at a time.
      const size = Math.min(100, reads === 0 ? limit : 100);
      const ids: string[] = [];
      while (ids.length < size) {
        const next = candidates.next();
        if (next.done) break;
        ids.push(next.value);
      }
      if (ids.length === 0) return { items, last, exhausted: true };
      const found = new Map((await this.getMany(ids)).map((p) => [p.paystub_id, p]));
      for (const id of ids) {
        last = id;
        const stub = found.get(id);
        if (stub?.organization_id !== orgId) continue;
        items.push(stub);
        if (items.length === limit) return { items, last, exhausted: false };
      }
      if (ids.length < size) return { items, last, exhausted: true };
    }
    return { items, last, exhausted: false };
  }

  /**
   * The employee's paystubs of a calendar year up to and including `upTo` (by pay date, then id): what year-to-date
   * sums, projected (a page of a run's paystubs asks this of 100 employees at once; whole items were 5 times the
   * bytes for the engine to read and the SDK to parse).
   */
  async yearOf(
    orgId: string,
    employeeId: string,
    upTo: Pick<PaystubRecord, 'pay_date' | 'paystub_id'>,
  ): Promise<YearLine[]> {
    const out: YearLine[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await queryPage(
        this.table,
        {
          IndexName: GSI2.name,
          KeyConditionExpression: `${GSI2.pk} = :pk AND ${GSI2.sk} BETWEEN :from AND :to`,
          FilterExpression: 'organization_id = :org',
          ProjectionExpression: `PK, SK, ${GSI2.pk}, ${GSI2.sk}, ${YEAR_LINE_FIELDS.join(', ')}`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':pk': keys.paystubsByEmployee(employeeId),
            ':org': orgId,
            ':from': `${descendingDate(upTo.pay_date)}#`,
            ':to': `${descendingDate(`${upTo.pay_date.slice(0, 4)}-01-01`)}#~`,
          },
        },
        100,
        start,
        (item) => parseItem(yearLine, item, 'paystub'),
      );
      out.push(...page.items);
      start = page.lastKey;
    } while (start);
    return out.filter((p) => p.pay_date < upTo.pay_date || p.paystub_id <= upTo.paystub_id);
  }
}
