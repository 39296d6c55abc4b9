import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { TableRef } from '../adapters/dynamo.js';
import { PAYROLL_STATES, PAYROLL_STATUSES, type PayrollStatus } from '../domain/payroll-lifecycle.js';
import { FUNDING_STATUSES } from '../domain/money-back.js';
import type { FundingAccount, Originator } from '../domain/settings.js';
import { batchGetAll } from './batch.js';
import { queryFilter } from './filters.js';
import { cancelledConditions, isConditionalCheckFailure, parseItem, type TransactItems } from './item.js';
import { GSI2, keys } from './keys.js';
import { fundingAccountItem, originatorItem } from './organization-repository.js';
import { queryPage, type Page } from './paginate.js';

const cents = z.number().int();

const bankReturn = z.object({ code: z.string(), reason: z.string(), returned_at: z.string() });

const fundingItem = z.object({
  status: z.enum(FUNDING_STATUSES),
  /** The offset debit: its amount (the whole of the run's credits), trace number and settlement date. */
  amount: cents,
  trace_number: z.string(),
  effective_entry_date: z.string(),
  /** The debit the bank may still return: the offset's, or the last re-debit's. */
  outstanding_trace: z.string(),
  outstanding_amount: cents,
  /** The latest return of the debit (the original's or a re-debit's). */
  return: bankReturn.nullable(),
  redebits: z.array(
    z.object({
      file_id: z.string(),
      trace_number: z.string(),
      amount: cents,
      effective_entry_date: z.string(),
      created_at: z.string(),
      return: bankReturn.nullable(),
    }),
  ),
  resolution: z
    .object({ method: z.enum(['wire', 'other']), reference: z.string(), resolved_at: z.string() })
    .nullable(),
  /** Every debit of the run's funding the bank returned: a return of one of them again is `already_applied`. */
  returned_traces: z.array(z.string()).default([]),
});
export type FundingRecord = z.infer<typeof fundingItem>;

const payrollItem = z.object({
  payroll_id: z.string(),
  organization_id: z.string(),
  environment: z.enum(['sandbox', 'production']),
  type: z.enum(['regular', 'off_cycle']),
  status: z.enum(PAYROLL_STATUSES),
  pay_period_start: z.string(),
  pay_period_end: z.string(),
  pay_date: z.string(),
  employee_count: z.number().int(),
  totals: z.object({ gross_pay: cents, bonuses: cents, deductions: cents, net_pay: cents }),
  content_hash: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  status_history: z.array(
    z.object({ status: z.enum(PAYROLL_STATUSES), at: z.string(), reason: z.string().nullable().optional() }),
  ),
  chunk_size: z.number().int().positive(),
  chunk_count: z.number().int().nullable().default(null),
  chunks_done: z
    .set(z.number())
    .optional()
    .transform((s) => s ?? new Set<number>()),
  processing_started_at: z.string().nullable().default(null),
  findings: z
    .array(
      z.object({
        code: z.string(),
        message: z.string(),
        employee_id: z.string().nullable().optional(),
        field: z.string().nullable().optional(),
      }),
    )
    .default([]),
  disbursement: z
    .object({
      entry_count: z.number().int(),
      entry_hash: z.string(),
      total_credit: cents,
      total_debit: cents,
      batch_count: z.number().int(),
      block_count: z.number().int(),
      created_at: z.string(),
      /** The file's entry in the list of files (absent on runs finished before files were listed). */
      file_id: z.string().optional(),
    })
    .nullable()
    .default(null),
  /** A balanced run's debit of the funding account, and what became of it (CONTRACT §12). */
  funding: fundingItem.nullable().default(null),
  /** Payments of the run reversed (POST /v1/payroll/{id}/reversals), and their amount. */
  reversals_count: z.number().int().default(0),
  reversals_amount: cents.default(0),
  failure_reason: z.string().nullable().default(null),
  /**
   * The wrapped data key the run's NACHA file is sealed with (shared/adapters/file-sealer.ts). Erased when the run
   * is cancelled or fails: the file can then never be read again, wherever its bytes are kept.
   */
  file_key: z.string().nullable().default(null),
  /** The key that submitted the run: dual control refuses it as the approver. */
  submitted_by: z.object({ api_key_id: z.string() }).nullable().default(null),
  /** Who approved the run, and when (runs accepted under automatic approval have none). */
  approved_by: z.object({ api_key_id: z.string(), at: z.string() }).nullable().default(null),
  /** Awaiting approval: the instant it must be approved by (its release day at the cut-off, New York time). */
  approve_by: z.string().nullable().default(null),
  /** When every paystub of a cancelled or failed run was found voided: a repeated cancel has nothing left to do. */
  paystubs_voided_at: z.string().nullable().default(null),
  /** The NACHA originator as it stood when processing began: every chunk and the file use this one. */
  originator: originatorItem.nullable().default(null),
  /** The funding account as it stood when processing began (encrypted): the file's offset debit draws on it. */
  funding_account: fundingAccountItem.nullable().default(null),
  /** The first of the run's block of trace sequences: entry i of the submission is `trace_start + i`. */
  trace_start: z.number().int().positive().nullable().default(null),
  file_id_modifier: z.string().nullable().default(null),
  /** Deposits of the run the bank returned, and their amount: added to by each return, once per deposit. */
  returns_count: z.number().int().default(0),
  returns_amount: cents.default(0),
  /** How its paystubs are named (PaystubNaming): chosen when its processing is planned; absent is `employee`. */
  paystub_naming: z.enum(['entry', 'employee']).optional(),
});
export type PayrollRecord = z.infer<typeof payrollItem>;

const runOfPaystubs = payrollItem.pick({
  payroll_id: true,
  organization_id: true,
  status: true,
  pay_date: true,
  pay_period_start: true,
  pay_period_end: true,
  employee_count: true,
  paystub_naming: true,
});
export type RunOfPaystubs = z.infer<typeof runOfPaystubs>;

const windowItem = z.object({ payroll_id: z.string() });
const idempotencyItem = z.object({
  content_hash: z.string(),
  payroll_id: z.string(),
  expires_epoch: z.number(),
  /** A reversal's key: the file the request wrote. */
  file_id: z.string().optional(),
});
export type IdempotencyRecord = z.infer<typeof idempotencyItem>;

const parse = (item: Record<string, unknown>) => parseItem(payrollItem, item, 'payroll');

export type CreateOutcome =
  | { ok: true }
  | { ok: false; reason: 'window_taken'; existingPayrollId: string }
  | { ok: false; reason: 'idempotency_key_taken' };

export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

function toItem(record: PayrollRecord): Record<string, unknown> {
  const { chunks_done, ...rest } = record;
  return {
    ...keys.payroll(record.organization_id, record.payroll_id),
    entity: 'payroll',
    ...rest,
    // Empty sets cannot be stored; absent means empty.
    ...(chunks_done.size > 0 && { chunks_done }),
    ...(PAYROLL_STATES[record.status].inFlight && {
      GSI2PK: keys.activePayrollsIndex,
      GSI2SK: `${record.updated_at}#${record.payroll_id}`,
    }),
  };
}

export class PayrollRepository {
  constructor(private readonly table: TableRef) {}

  /**
   * The record, the window item (regular runs) and the idempotency item (when a key is given) are written in one
   * transaction: of any number of concurrent identical submissions exactly one succeeds, and the others learn
   * from the cancellation reasons which item someone else holds.
   */
  async create(
    record: PayrollRecord,
    options: { window: boolean; idempotencyKeyHash?: string; now: Date; alsoWrite?: TransactItems },
  ): Promise<CreateOutcome> {
    const t = this.table.tableName;
    const items: TransactItems = [
      { Put: { TableName: t, Item: toItem(record), ConditionExpression: 'attribute_not_exists(PK)' } },
    ];
    let windowIndex = -1;
    let idempotencyIndex = -1;
    if (options.window) {
      windowIndex = items.length;
      items.push({
        Put: {
          TableName: t,
          Item: {
            ...keys.payrollWindow(record.organization_id, record.pay_period_start, record.pay_period_end),
            entity: 'payroll_window',
            payroll_id: record.payroll_id,
          },
          ConditionExpression: 'attribute_not_exists(PK)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      });
    }
    if (options.idempotencyKeyHash) {
      idempotencyIndex = items.length;
      const nowEpoch = Math.floor(options.now.getTime() / 1000);
      items.push({
        Put: {
          TableName: t,
          Item: {
            ...keys.idempotency(record.organization_id, options.idempotencyKeyHash),
            entity: 'idempotency_key',
            content_hash: record.content_hash,
            payroll_id: record.payroll_id,
            expires_epoch: nowEpoch + IDEMPOTENCY_TTL_SECONDS,
            ttl: nowEpoch + IDEMPOTENCY_TTL_SECONDS,
          },
          // TTL deletes lazily: an expired key is free again even before it disappears.
          ConditionExpression: 'attribute_not_exists(PK) OR expires_epoch < :now',
          ExpressionAttributeValues: { ':now': nowEpoch },
        },
      });
    }
    items.push(...(options.alsoWrite ?? []));
    try {
      await this.table.doc.send(new TransactWriteCommand({ TransactItems: items }));
      return { ok: true };
    } catch (err) {
      const failed = cancelledConditions(err);
      if (!failed) throw err;
      if (idempotencyIndex >= 0 && failed[idempotencyIndex]) return { ok: false, reason: 'idempotency_key_taken' };
      if (windowIndex >= 0 && failed[windowIndex]) {
        const reasons = (err as { CancellationReasons?: { Item?: Record<string, { S?: string }> }[] })
          .CancellationReasons;
        const existing = reasons?.[windowIndex]?.Item?.payroll_id?.S;
        return {
          ok: false,
          reason: 'window_taken',
          existingPayrollId:
            existing ??
            (await this.getWindow(record.organization_id, record.pay_period_start, record.pay_period_end)) ??
            'unknown',
        };
      }
      throw err;
    }
  }

  /** Counts one returned deposit of `amount` cents in the run's `returns`, in the return's transaction. */
  returnTallyItem(orgId: string, payrollId: string, amount: number): TransactItems[number] {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.payroll(orgId, payrollId),
        UpdateExpression: 'ADD returns_count :one, returns_amount :amount',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':one': 1, ':amount': amount },
      },
    };
  }

  /** An idempotency key taken by a request other than a submission (a reversal): free, or expired. */
  idempotencyItem(
    orgId: string,
    keyHash: string,
    record: Omit<IdempotencyRecord, 'expires_epoch'>,
    now: Date,
  ): TransactItems[number] {
    const nowEpoch = Math.floor(now.getTime() / 1000);
    return {
      Put: {
        TableName: this.table.tableName,
        Item: {
          ...keys.idempotency(orgId, keyHash),
          entity: 'idempotency_key',
          ...record,
          expires_epoch: nowEpoch + IDEMPOTENCY_TTL_SECONDS,
          ttl: nowEpoch + IDEMPOTENCY_TTL_SECONDS,
        },
        ConditionExpression: 'attribute_not_exists(PK) OR expires_epoch < :now',
        ExpressionAttributeValues: { ':now': nowEpoch },
      },
    };
  }

  async get(orgId: string, payrollId: string): Promise<PayrollRecord | undefined> {
    const out = await this.table.doc.send(
      new GetCommand({ TableName: this.table.tableName, Key: keys.payroll(orgId, payrollId), ConsistentRead: true }),
    );
    return out.Item ? parse(out.Item) : undefined;
  }

  async getMany(orgId: string, payrollIds: readonly string[]): Promise<PayrollRecord[]> {
    return (
      await batchGetAll(
        this.table,
        payrollIds.map((id) => keys.payroll(orgId, id)),
      )
    ).map(parse);
  }

  async getWindow(orgId: string, start: string, end: string): Promise<string | undefined> {
    const out = await this.table.doc.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.payrollWindow(orgId, start, end),
        ConsistentRead: true,
      }),
    );
    return out.Item ? parseItem(windowItem, out.Item, 'payroll window').payroll_id : undefined;
  }

  async getIdempotency(orgId: string, keyHash: string, now: Date): Promise<IdempotencyRecord | undefined> {
    const out = await this.table.doc.send(
      new GetCommand({ TableName: this.table.tableName, Key: keys.idempotency(orgId, keyHash), ConsistentRead: true }),
    );
    if (!out.Item) return undefined;
    const record = parseItem(idempotencyItem, out.Item, 'idempotency key');
    return record.expires_epoch >= Math.floor(now.getTime() / 1000) ? record : undefined;
  }

  async list(
    orgId: string,
    filters: { status?: PayrollStatus; from?: string; to?: string },
    limit: number,
    startKey?: Record<string, unknown>,
  ): Promise<Page<PayrollRecord>> {
    return queryPage(
      this.table,
      {
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ...queryFilter({ ':pk': keys.orgPartition(orgId), ':prefix': keys.payrollPrefix }, [
          filters.status && {
            expression: '#status = :status',
            names: { '#status': 'status' },
            values: { ':status': filters.status },
          },
          filters.from && { expression: 'pay_date >= :from', values: { ':from': filters.from } },
          filters.to && { expression: 'pay_date <= :to', values: { ':to': filters.to } },
        ]),
        ScanIndexForward: false,
      },
      limit,
      startKey,
      parse,
    );
  }

  /**
   * Every run of the organization that reserved trace numbers, for matching a bank's return to a run planned before
   * trace blocks were recorded. Read only when a trace has no block; all pages.
   */
  async listPlanned(orgId: string): Promise<PayrollRecord[]> {
    const out: PayrollRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await queryPage(
        this.table,
        {
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
          FilterExpression: 'attribute_exists(trace_start) AND trace_start <> :null',
          ExpressionAttributeValues: { ':pk': keys.orgPartition(orgId), ':prefix': keys.payrollPrefix, ':null': null },
        },
        1000,
        start,
        parse,
      );
      out.push(...page.items);
      start = page.lastKey;
    } while (start);
    return out;
  }

  /**
   * The organization's runs that wrote paystubs (planned, and ended: completed, cancelled or failed), with what the
   * list of paystubs needs of them: the organization's paystubs are these runs' ranges of ids. All pages, a few
   * hundred bytes a run.
   */
  async withPaystubs(orgId: string): Promise<RunOfPaystubs[]> {
    const out: RunOfPaystubs[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.table.doc.send(
        new QueryCommand({
          TableName: this.table.tableName,
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
          FilterExpression: 'chunk_count > :zero AND #status IN (:completed, :cancelled, :failed)',
          ProjectionExpression:
            'payroll_id, organization_id, #status, pay_date, pay_period_start, pay_period_end, employee_count, paystub_naming',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':pk': keys.orgPartition(orgId),
            ':prefix': keys.payrollPrefix,
            ':zero': 0,
            ':completed': 'completed',
            ':cancelled': 'cancelled',
            ':failed': 'failed',
          },
          ExclusiveStartKey: start,
          // A run that has just completed is in the list at once.
          ConsistentRead: true,
        }),
      );
      out.push(...(page.Items ?? []).map((item) => parseItem(runOfPaystubs, item, 'payroll')));
      start = page.LastEvaluatedKey;
    } while (start);
    return out;
  }

  /**
   * Moves the payroll to `to` if it is in a status that may move there, appending to its history. Returns false
   * when the condition fails (another worker moved it, or it is already there): transitions are idempotent.
   * `set` adds attributes in the same write; `alsoWrite` adds items to the same transaction (events, window release).
   */
  async transition(
    record: Pick<PayrollRecord, 'organization_id' | 'payroll_id'>,
    /** `withdrawFile`: the file's key is erased in the same write (the run ends without paying). */
    move: { to: PayrollStatus; from: readonly PayrollStatus[]; withdrawFile?: boolean; fileId?: string },
    at: string,
    options: { reason?: string; set?: Record<string, unknown>; alsoWrite?: TransactItems } = {},
  ): Promise<boolean> {
    const { to } = move;
    const names: Record<string, string> = { '#status': 'status' };
    const values: Record<string, unknown> = {
      ':to': to,
      ':at': at,
      ':entry': [{ status: to, at, reason: options.reason ?? null }],
    };
    const sets = ['#status = :to', 'updated_at = :at', 'status_history = list_append(status_history, :entry)'];
    const sources = move.from;
    sources.forEach((s, i) => {
      values[`:from${i}`] = s;
    });
    for (const [k, v] of Object.entries(options.set ?? {})) {
      names[`#${k}`] = k;
      values[`:${k}`] = v;
      sets.push(`#${k} = :${k}`);
    }
    let update = `SET ${sets.join(', ')}`;
    if (!PAYROLL_STATES[to].inFlight) {
      // A run that ends without paying withdraws its file: the file's key goes in the same write.
      update += move.withdrawFile ? ' REMOVE GSI2PK, GSI2SK, file_key' : ' REMOVE GSI2PK, GSI2SK';
    } else {
      values[':gsi2pk'] = keys.activePayrollsIndex;
      values[':gsi2sk'] = `${at}#${record.payroll_id}`;
      update = update.replace('SET ', 'SET GSI2PK = :gsi2pk, GSI2SK = :gsi2sk, ');
    }
    let condition = `#status IN (${sources.map((_, i) => `:from${i}`).join(', ')})`;
    if (move.withdrawFile) {
      // A file some money came back through (a reversal, a re-debit) is never withdrawn: those files are live. In the
      // write itself, so a reversal committed since the caller read the run cannot slip past.
      condition +=
        ' AND (attribute_not_exists(reversals_count) OR reversals_count = :none)' +
        ' AND (attribute_not_exists(funding.redebits) OR size(funding.redebits) = :none)';
      values[':none'] = 0;
    }
    const key = keys.payroll(record.organization_id, record.payroll_id);
    const alsoWrite = [...(options.alsoWrite ?? [])];
    // A listed file is marked withdrawn with its run: it must never reach a bank.
    if (move.withdrawFile && move.fileId)
      alsoWrite.push({
        Update: {
          TableName: this.table.tableName,
          Key: keys.disbursementFile(record.organization_id, move.fileId),
          // Off the bank link's work list in the same write: a withdrawn file is never sent.
          UpdateExpression: 'SET #status = :withdrawn REMOVE GSI2PK, GSI2SK',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':withdrawn': 'withdrawn' },
        },
      });
    try {
      if (alsoWrite.length > 0) {
        await this.table.doc.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: this.table.tableName,
                  Key: key,
                  UpdateExpression: update,
                  ConditionExpression: condition,
                  ExpressionAttributeNames: names,
                  ExpressionAttributeValues: values,
                },
              },
              ...alsoWrite,
            ],
          }),
        );
      } else {
        await this.table.doc.send(
          new UpdateCommand({
            TableName: this.table.tableName,
            Key: key,
            UpdateExpression: update,
            ConditionExpression: condition,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
        );
      }
      return true;
    } catch (err) {
      if (isConditionalCheckFailure(err) || cancelledConditions(err)?.[0]) return false;
      throw err;
    }
  }

  /** Records that every paystub of the ended run is voided. */
  async markPaystubsVoided(orgId: string, payrollId: string, at: string): Promise<void> {
    await this.table.doc.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: keys.payroll(orgId, payrollId),
        UpdateExpression: 'SET paystubs_voided_at = :at',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':at': at },
      }),
    );
  }

  /**
   * The run's file key: the one stored, or `wrapped` if none is yet (two finalizers racing seal with the same key).
   * Only while the run is processing: a run cancelled or failed meanwhile gets none, and its file is never readable.
   */
  async reserveFileKey(orgId: string, payrollId: string, wrapped: string): Promise<string | undefined> {
    try {
      await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.payroll(orgId, payrollId),
          UpdateExpression: 'SET file_key = :key',
          ConditionExpression:
            '#status = :processing AND (attribute_not_exists(file_key) OR attribute_type(file_key, :null))',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':key': wrapped, ':processing': 'processing', ':null': 'NULL' },
        }),
      );
      return wrapped;
    } catch (err) {
      if (!isConditionalCheckFailure(err)) throw err;
      // Another finalizer reserved one first (use it), or the run is no longer processing (none).
      const now = await this.get(orgId, payrollId);
      return now?.status === 'processing' && now.file_key ? now.file_key : undefined;
    }
  }

  /**
   * Records the chunk plan, the start time, the originator, the funding account and the file's reservation (trace
   * block, file ID modifier) once; a re-run finds them already set and keeps the first ones, so every chunk and the
   * file agree on trace numbers and dates. `alsoWrite` starts with the reservation's counter updates: `conflict`
   * says another run moved a counter since it was read, and the caller reserves again.
   */
  async planChunks(
    orgId: string,
    payrollId: string,
    plan: {
      chunkCount: number;
      /** Entries per chunk, as the chunk files were cut (chunkSizeFor): progress counts by it. */
      chunkSize: number;
      startedAt: string;
      originator: Originator;
      fundingAccount: FundingAccount | null;
      traceStart: number;
      fileIdModifier: string;
    },
    alsoWrite: TransactItems = [],
  ): Promise<'planned' | 'already_planned' | 'conflict'> {
    try {
      await this.table.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.table.tableName,
                Key: keys.payroll(orgId, payrollId),
                UpdateExpression:
                  'SET chunk_count = :n, chunk_size = :size, processing_started_at = :at, originator = :originator, ' +
                  'funding_account = :funding, trace_start = :trace, file_id_modifier = :modifier, ' +
                  'paystub_naming = :naming',
                ConditionExpression:
                  '#status = :processing AND (attribute_not_exists(chunk_count) OR chunk_count = :null)',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: {
                  ':n': plan.chunkCount,
                  ':size': plan.chunkSize,
                  ':at': plan.startedAt,
                  ':originator': plan.originator,
                  ':funding': plan.fundingAccount,
                  ':trace': plan.traceStart,
                  ':modifier': plan.fileIdModifier,
                  // Every run planned from now on names its paystubs by entry: no index keyed by the run.
                  ':naming': 'entry',
                  ':processing': 'processing',
                  ':null': null,
                },
              },
            },
            ...alsoWrite,
          ],
        }),
      );
      return 'planned';
    } catch (err) {
      const failed = cancelledConditions(err);
      if (failed?.[0]) return 'already_planned';
      if (failed?.some(Boolean)) return 'conflict';
      throw err;
    }
  }

  /**
   * Adds the chunk to the set of finished chunks. A set, not a counter: a chunk finished twice (re-delivery)
   * is counted once. Returns the record as it now stands, or undefined if the payroll is no longer processing or
   * the chunk was already done (a twin delivery of its message finished it first): exactly one call per chunk gets
   * the record, so what it does once per chunk (counting the chunk's paystubs) happens once.
   */
  async markChunkDone(orgId: string, payrollId: string, chunk: number, at: string): Promise<PayrollRecord | undefined> {
    const values: Record<string, unknown> = {
      ':chunk': new Set([chunk]),
      ':n': chunk,
      ':processing': 'processing',
      ':at': at,
      ':gsi2sk': `${at}#${payrollId}`,
    };
    const update = 'ADD chunks_done :chunk SET updated_at = :at, GSI2SK = :gsi2sk';
    try {
      const out = await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.payroll(orgId, payrollId),
          UpdateExpression: update,
          ConditionExpression: '#status = :processing AND NOT contains(chunks_done, :n)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return parse(out.Attributes!);
    } catch (err) {
      if (isConditionalCheckFailure(err)) return undefined;
      throw err;
    }
  }

  /** Runs still pending or processing whose last change is older than `before` (ISO time), oldest first. */
  async listUnfinished(before: string, limit: number): Promise<PayrollRecord[]> {
    const page = await queryPage(
      this.table,
      {
        IndexName: GSI2.name,
        KeyConditionExpression: 'GSI2PK = :pk AND GSI2SK < :before',
        ExpressionAttributeValues: { ':pk': keys.activePayrollsIndex, ':before': before },
      },
      limit,
      undefined,
      parse,
    );
    return page.items;
  }

  /**
   * Cancelling a regular run frees its window for a new submission: this item goes in the cancelling transition's
   * transaction (`alsoWrite`). It deletes the window only while it still names this run.
   */
  windowRelease(record: PayrollRecord): TransactItems {
    return record.type === 'regular'
      ? [
          {
            Delete: {
              TableName: this.table.tableName,
              Key: keys.payrollWindow(record.organization_id, record.pay_period_start, record.pay_period_end),
              ConditionExpression: 'attribute_not_exists(PK) OR payroll_id = :id',
              ExpressionAttributeValues: { ':id': record.payroll_id },
            },
          },
        ]
      : [];
  }
}
