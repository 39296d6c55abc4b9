import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { encodeTime } from 'ulid';
import * as z from 'zod';
import type { TableRef } from '../adapters/dynamo.js';
import { FILE_STATUSES, FILE_TYPES, type DisbursementFileType } from '../domain/money-back.js';
import { queryFilter } from './filters.js';
import { parseItem, type TransactItems } from './item.js';
import { keys } from './keys.js';
import { queryPage, type Page } from './paginate.js';

const cents = z.number().int();
const entryReturn = z.object({ code: z.string(), reason: z.string(), returned_at: z.string() });

const fileItem = z.object({
  file_id: z.string(),
  organization_id: z.string(),
  type: z.enum(FILE_TYPES),
  /** The run the file belongs to (every file type so far is written for one run). */
  payroll_id: z.string().nullable(),
  status: z.enum(FILE_STATUSES),
  created_at: z.string(),
  effective_entry_date: z.string(),
  release_by: z.string(),
  file_id_modifier: z.string(),
  entry_count: z.number().int(),
  entry_hash: z.string(),
  total_credit: cents,
  total_debit: cents,
  batch_count: z.number().int(),
  block_count: z.number().int(),
  transmitted_at: z.string().nullable().default(null),
  /** The bank link: the name it has on the bank's server, the SHA-256 of the bytes sent, the bank's acknowledgement. */
  remote_name: z.string().nullable().default(null),
  sent_sha256: z.string().nullable().default(null),
  acknowledged_at: z.string().nullable().default(null),
  /** When it was found late (not sent by its cut-off, or not acknowledged an hour after): once. */
  late_at: z.string().nullable().default(null),
  /** Where the sealed file is stored. */
  object_key: z.string(),
  /** The wrapped data key the file is sealed with; null for a payroll's file, sealed under its run's key. */
  file_key: z.string().nullable(),
  /** A reversal: why it was asked for. */
  reason: z.string().nullable().default(null),
  /**
   * The entries the bank may send back, by trace number (a payroll's are found through its run instead): a
   * reversal's debits (`payment`, with their paystub) and its offset credit, a re-debit's debit (`funding`).
   */
  entries: z
    .array(
      z.object({
        trace_number: z.string(),
        kind: z.enum(['payment', 'funding']),
        paystub_id: z.string().nullable(),
        amount: cents,
        return: entryReturn.nullable().default(null),
      }),
    )
    .default([]),
});
export type DisbursementFileRecord = z.infer<typeof fileItem>;

export const parseFileItem = (item: Record<string, unknown>) => parseItem(fileItem, item, 'disbursement file');
const parse = parseFileItem;

export interface FileFilters {
  type?: DisbursementFileType;
  payrollId?: string;
  /** Creation dates (UTC), inclusive. */
  from?: string;
  to?: string;
}

/** The smallest and the largest time-ordered file id created on a UTC day. */
function idBound(date: string, end: boolean): string {
  const ms = Date.parse(`${date}T00:00:00Z`) + (end ? 86_400_000 - 1 : 0);
  return `${keys.disbursementFilePrefix}file_${encodeTime(ms, 10).toLowerCase()}${(end ? 'z' : '0').repeat(16)}`;
}

/** Every NACHA file the service wrote, under its organization: ids are time-ordered, so the list is newest first. */
export class DisbursementFileRepository {
  constructor(private readonly table: TableRef) {}

  /** The file's item, written in the transaction that makes the file count (a run's finish, a reversal, a re-debit). */
  putItem(file: DisbursementFileRecord): TransactItems[number] {
    return {
      Put: {
        TableName: this.table.tableName,
        Item: {
          ...keys.disbursementFile(file.organization_id, file.file_id),
          entity: 'disbursement_file',
          ...file,
          // On the bank link's work list until the bank acknowledges it (or it is withdrawn).
          ...(file.status === 'ready' && {
            GSI2PK: keys.openFilesIndex,
            GSI2SK: keys.openFileSort(file.organization_id, file.file_id),
          }),
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    };
  }

  /** Records the bank's return of one of the file's entries (at `index`), once. */
  entryReturnItem(
    file: DisbursementFileRecord,
    index: number,
    entryReturnValue: z.infer<typeof entryReturn>,
  ): TransactItems[number] {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.disbursementFile(file.organization_id, file.file_id),
        UpdateExpression: `SET entries[${index}].#return = :return`,
        ConditionExpression: `attribute_exists(PK) AND attribute_type(entries[${index}].#return, :null)`,
        ExpressionAttributeNames: { '#return': 'return' },
        ExpressionAttributeValues: { ':return': entryReturnValue, ':null': 'NULL' },
      },
    };
  }

  async get(orgId: string, fileId: string): Promise<DisbursementFileRecord | undefined> {
    const out = await this.table.doc.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.disbursementFile(orgId, fileId),
        ConsistentRead: true,
      }),
    );
    return out.Item ? parse(out.Item) : undefined;
  }

  async list(
    orgId: string,
    filters: FileFilters,
    limit: number,
    startKey?: Record<string, unknown>,
  ): Promise<Page<DisbursementFileRecord>> {
    const prefix = keys.disbursementFilePrefix;
    const range = filters.from !== undefined || filters.to !== undefined;
    return queryPage(
      this.table,
      {
        KeyConditionExpression: range
          ? 'PK = :pk AND SK BETWEEN :first AND :last'
          : 'PK = :pk AND begins_with(SK, :prefix)',
        ...queryFilter(
          range
            ? {
                ':pk': keys.orgPartition(orgId),
                ':first': filters.from ? idBound(filters.from, false) : prefix,
                ':last': filters.to ? idBound(filters.to, true) : `${prefix}~`,
              }
            : { ':pk': keys.orgPartition(orgId), ':prefix': prefix },
          [
            filters.type && {
              expression: '#type = :type',
              names: { '#type': 'type' },
              values: { ':type': filters.type },
            },
            filters.payrollId && { expression: 'payroll_id = :payroll', values: { ':payroll': filters.payrollId } },
          ],
        ),
        ScanIndexForward: false,
        ConsistentRead: true,
      },
      limit,
      startKey,
      parse,
    );
  }
}
