import { BatchGetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { TableRef } from '../adapters/dynamo.js';
import { fileIdModifierFor, LEGACY_TRACE_FLOOR, MAX_TRACE_SEQUENCE } from '../domain/disbursement.js';
import type { TransactItems } from './item.js';
import { parseItem } from './item.js';
import { TTL_ATTRIBUTE, keys } from './keys.js';

const traceBlockItem = z.object({
  payroll_id: z.string().optional(),
  file_id: z.string().optional(),
  start: z.number().int(),
  entries: z.number().int(),
});

/** Whose entries a trace number belongs to: a run's (the n-th entry of its submission) or another file's. */
export type TraceOwner =
  | { kind: 'payroll'; payrollId: string; index: number; entries: number }
  | { kind: 'file'; fileId: string; index: number };
const counterItem = z.object({ value: z.number().int().nonnegative() });

/** A file-ID counter only matters on its creation date; it is kept a while for whoever reads the table. */
const FILE_COUNTER_TTL_SECONDS = 35 * 24 * 3600;

export class TraceSequenceExhaustedError extends Error {
  constructor(odfi: string) {
    super(`The 7-digit trace sequence of this organization's files for ODFI ${odfi} is used up`);
    this.name = 'TraceSequenceExhaustedError';
  }
}

/**
 * What a run's file gets from the organization's two sequences: a block of trace sequences and a file ID
 * modifier. `items` are the counters' conditional updates: written in the same transaction as the run's plan, a
 * reservation exists exactly when the plan does, so a re-run neither skips nor reuses a number. A transaction
 * that loses the race for a counter is cancelled whole, and the caller reserves again from fresh readings.
 */
export interface DisbursementReservation {
  /** The first trace sequence of the block; the block is `traceCount` long. */
  traceStart: number;
  /** A for the organization's first file to that destination that day, then B, … */
  fileIdModifier: string;
  items: TransactItems;
}

export class DisbursementSequenceRepository {
  constructor(private readonly table: TableRef) {}

  async reserve(
    orgId: string,
    request: {
      odfi: string;
      destination: string;
      creationDate: string;
      traceCount: number;
      now: Date;
      /** An organization whose earlier files were numbered per run (see `sequences_since` in its settings). */
      legacy?: boolean;
      /**
       * The run the block is for and how many of its sequences are its entries (the rest are offset debits), or
       * the file it is for (a reversal, a re-debit): what a bank's return of one of them is matched back to.
       */
      owner: { payrollId: string } | { fileId: string };
      entries: number;
    },
  ): Promise<DisbursementReservation> {
    const traceKey = keys.traceSequence(orgId, request.odfi);
    const fileKey = keys.fileIdSequence(orgId, request.destination, request.creationDate);
    const out = await this.table.doc.send(
      new BatchGetCommand({
        RequestItems: { [this.table.tableName]: { Keys: [traceKey, fileKey], ConsistentRead: true } },
      }),
    );
    const found = out.Responses?.[this.table.tableName] ?? [];
    // Two small keys never come back unprocessed but under throttling; then the counters read as unknown.
    if ((out.UnprocessedKeys?.[this.table.tableName]?.Keys ?? []).length > 0) throw new Error('Counters were not read');
    const counterValue = (key: { SK: string }) => {
      const item = found.find((candidate) => candidate.SK === key.SK);
      return item ? parseItem(counterItem, item, 'sequence counter').value : undefined;
    };
    const tracesUsed = counterValue(traceKey);
    const filesMade = counterValue(fileKey);
    const firstReservation = tracesUsed === undefined;
    const used = tracesUsed ?? (request.legacy ? LEGACY_TRACE_FLOOR : 0);
    const traceStart = used + 1;
    if (traceStart + request.traceCount - 1 > MAX_TRACE_SEQUENCE) throw new TraceSequenceExhaustedError(request.odfi);
    // The first file of an organization numbered per run before may share its day with one of those, all `A`.
    const fileIndex = filesMade ?? (request.legacy && firstReservation ? 1 : 0);
    const expires = Math.floor(request.now.getTime() / 1000) + FILE_COUNTER_TTL_SECONDS;
    return {
      traceStart,
      fileIdModifier: fileIdModifierFor(fileIndex),
      items: [
        this.advance(traceKey, tracesUsed, used + request.traceCount),
        this.advance(fileKey, filesMade, fileIndex + 1, expires),
        // What matches a bank's return back to the run: trace → block → entry index → employee → paystub.
        {
          Put: {
            TableName: this.table.tableName,
            Item: {
              ...keys.traceBlock(orgId, request.odfi, traceStart),
              entity: 'trace_block',
              ...('payrollId' in request.owner
                ? { payroll_id: request.owner.payrollId }
                : { file_id: request.owner.fileId }),
              start: traceStart,
              entries: request.entries,
            },
          },
        },
      ],
    };
  }

  /**
   * Whose block holds this trace number: a run's (`index` past `entries` is one of its offset entries) or a file's.
   * Only the block that starts at or before the sequence can hold it; whether the index is inside the block the
   * owner knows (a block records a run's entry count, not its offsets).
   */
  async ownerOf(orgId: string, traceNumber: string): Promise<TraceOwner | undefined> {
    if (!/^\d{15}$/.test(traceNumber)) return undefined;
    const odfi = traceNumber.slice(0, 8);
    const sequence = Number(traceNumber.slice(8));
    const out = await this.table.doc.send(
      new QueryCommand({
        TableName: this.table.tableName,
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :first AND :this',
        ExpressionAttributeValues: {
          ':pk': keys.orgPartition(orgId),
          ':first': keys.traceBlockPrefix(odfi),
          ':this': keys.traceBlock(orgId, odfi, sequence).SK,
        },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    const item = out.Items?.[0];
    if (!item) return undefined;
    const block = parseItem(traceBlockItem, item, 'trace block');
    const index = sequence - block.start;
    if (block.file_id !== undefined)
      return index < block.entries ? { kind: 'file', fileId: block.file_id, index } : undefined;
    if (block.payroll_id === undefined) return undefined;
    return { kind: 'payroll', payrollId: block.payroll_id, index, entries: block.entries };
  }

  /** Moves a counter from the value read to `next`, on the condition nobody moved it in between. */
  private advance(
    key: { PK: string; SK: string },
    read: number | undefined,
    next: number,
    expires?: number,
  ): TransactItems[number] {
    const values: Record<string, unknown> = { ':next': next, ':entity': 'sequence' };
    const names: Record<string, string> = { '#value': 'value' };
    let update = 'SET #value = :next, entity = :entity';
    if (expires !== undefined) {
      update += ', #ttl = :ttl';
      names['#ttl'] = TTL_ATTRIBUTE;
      values[':ttl'] = expires;
    }
    if (read !== undefined) values[':read'] = read;
    return {
      Update: {
        TableName: this.table.tableName,
        Key: key,
        UpdateExpression: update,
        ConditionExpression: read === undefined ? 'attribute_not_exists(#value)' : '#value = :read',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    };
  }
}
