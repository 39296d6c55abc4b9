import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AuditRecord } from '../adapters/audit-sink.js';
import type { TableRef } from '../adapters/dynamo.js';
import { auditExpiresAt } from '../domain/audit.js';
import { auditRecordSchema } from '../schemas/audit.js';
import { batchPutAll } from './batch.js';
import { isConditionalCheckFailure } from './item.js';
import { logger } from '../adapters/logger.js';
import { TTL_ATTRIBUTE, keys } from './keys.js';
import { DEFAULT_READ_BUDGET, queryPage, type Page, type ReadBudget } from './paginate.js';
import { queryFilter } from './filters.js';

/**
 * The audit log, one item per request: PK `AUDIT#ORG#<org>`, SK `<at>#<request id>`. Outside the `ORG#` prefix that
 * most functions may write: only the audit writer may write this partition (shared/api/table-access.ts).
 *
 * One partition per organization, not one per organization and day. A day partition does not spread the writes
 * that matter: every line written at a given moment still lands in today's partition, so its instantaneous
 * ceiling is the same one key's ~1,000 writes/s (well above the stage's throttle, which bounds every organization
 * together). What it would cost is the read: newest-first across a from/to range would walk the days backwards,
 * one Query per day, up to 400 of them for a sparse or filtered log, and the page token would have to carry the
 * day. With one partition, any range is one key condition (`SK BETWEEN from AND to`) and DynamoDB's own
 * LastEvaluatedKey is the cursor. The table has no local secondary index, so an item collection has no size limit,
 * and the organization's other items (`ORG#<org>`) never share a partition key with this write-heavy log.
 *
 * Failures with no organization (an unknown or malformed token) go to `AUDIT#UNAUTHENTICATED#<day>`: nobody reads
 * them through the API, operators read one day at a time, and that traffic comes from anyone on the Internet,
 * so a day bounds each collection an operator has to page through. Anyone can send them, so they are not kept one
 * item each (200 bad tokens would cost 200 writes kept 400 days): one burst line per source address and minute
 * counts them, with their statuses, reasons and methods, and the first 20 request ids as a sample.
 *
 * Keys are deterministic (the request's own time and id), so a line written twice, as a retried delivery does,
 * is the same item.
 */
export interface AuditFilters {
  api_key_id?: string;
  status?: number;
  path_prefix?: string;
  /** Inclusive UTC instants in `toISOString` form. */
  from?: string;
  to?: string;
}

/** One source's failures of one minute that no organization owns, as one ingestion saw them. */
export interface UnauthenticatedBurst {
  /** `YYYY-MM-DDTHH:MM` (UTC). */
  minute: string;
  source_ip: string;
  first_at: string;
  last_at: string;
  request_ids: string[];
  statuses: number[];
  reasons: string[];
  methods: string[];
  /** A hash of the group's request ids: the same group ingested twice is counted once. */
  group_hash: string;
}

/** Request ids a burst line keeps as a sample. */
export const BURST_SAMPLE = 20;

/** Above every ASCII character a request id may contain: `<to>#<anything>` sorts below `<to>#\uffff`. */
const SK_CEILING = '\uffff';

function toItem(record: AuditRecord): Record<string, unknown> {
  const key = record.organization_id
    ? keys.auditLog(record.organization_id, record.at, record.request_id)
    : keys.unauthenticatedAuditLog(record.at, record.request_id);
  return { ...key, entity: 'audit', ...record, [TTL_ATTRIBUTE]: auditExpiresAt(record.at) };
}

/**
 * A stored line that no longer fits the schema (written by an older version, or out of bounds) is skipped and
 * logged, never allowed to fail a page of the log.
 */
const parse = (item: Record<string, unknown>): AuditRecord | undefined => {
  const parsed = auditRecordSchema.safeParse(item);
  if (parsed.success) return parsed.data;
  logger.warn('unreadable audit line skipped', { pk: String(item.PK), sk: String(item.SK) });
  return undefined;
};

export class AuditRepository {
  constructor(
    private readonly table: TableRef,
    private readonly budget: ReadBudget = DEFAULT_READ_BUDGET,
  ) {}

  /** Whole-item puts in batches of 25; unprocessed items are retried, and a write that cannot finish throws. */
  async putAll(records: readonly AuditRecord[]): Promise<void> {
    // Two lines with the same key in one BatchWriteItem are refused outright; the later copy is the same line.
    const unique = new Map(
      records.map((r) => {
        const item = toItem(r);
        return [`${item.PK as string}\u0000${item.SK as string}`, item];
      }),
    );
    if (unique.size > 0) await batchPutAll(this.table, [...unique.values()]);
  }

  /**
   * Counts one group of unattributed failures (one source, one minute) into its burst line. Idempotent per group:
   * a delivery retried after a partial write carries the same group, whose hash the line remembers, and is not
   * counted twice.
   */
  async addBurst(b: UnauthenticatedBurst): Promise<void> {
    const key = keys.unauthenticatedBurst(b.minute, b.source_ip);
    let count: number;
    try {
      const out = await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: key,
          UpdateExpression:
            'SET entity = :entity, source_ip = :ip, first_at = if_not_exists(first_at, :first), last_at = :last, #ttl = if_not_exists(#ttl, :ttl) ADD #count :n, statuses :statuses, reasons :reasons, methods :methods, groups :group',
          ConditionExpression: 'NOT contains(groups, :hash)',
          ExpressionAttributeNames: { '#count': 'count', '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: {
            ':entity': 'audit_burst',
            ':ip': b.source_ip,
            ':first': b.first_at,
            ':last': b.last_at,
            ':ttl': auditExpiresAt(b.first_at),
            ':n': b.request_ids.length,
            ':statuses': new Set(b.statuses.map(String)),
            ':reasons': new Set(b.reasons.length > 0 ? b.reasons : ['none']),
            ':methods': new Set(b.methods),
            ':group': new Set([b.group_hash]),
            ':hash': b.group_hash,
          },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      count = Number(out?.Attributes?.count ?? b.request_ids.length);
    } catch (err) {
      if (isConditionalCheckFailure(err)) return;
      throw err;
    }
    // The sample: the first BURST_SAMPLE request ids of the minute (a race may add one group's worth more).
    const before = count - b.request_ids.length;
    if (before >= BURST_SAMPLE) return;
    await this.table.doc.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: key,
        UpdateExpression: 'ADD request_ids :ids',
        ExpressionAttributeValues: { ':ids': new Set(b.request_ids.slice(0, BURST_SAMPLE - before)) },
      }),
    );
  }

  /** Newest first. `from`/`to` narrow the key range; the key, status and path prefix are filters. */
  async list(
    orgId: string,
    f: AuditFilters,
    limit: number,
    startKey?: Record<string, unknown>,
  ): Promise<Page<AuditRecord>> {
    const values: Record<string, unknown> = { ':pk': keys.auditLogPartition(orgId) };
    let keyCondition = 'PK = :pk';
    if (f.from && f.to) {
      keyCondition += ' AND SK BETWEEN :from AND :to';
      values[':from'] = f.from;
      values[':to'] = `${f.to}#${SK_CEILING}`;
    } else if (f.from) {
      keyCondition += ' AND SK >= :from';
      values[':from'] = f.from;
    } else if (f.to) {
      keyCondition += ' AND SK <= :to';
      values[':to'] = `${f.to}#${SK_CEILING}`;
    }
    const filter = queryFilter(values, [
      f.api_key_id !== undefined && { expression: 'api_key_id = :key', values: { ':key': f.api_key_id } },
      f.status !== undefined && {
        expression: '#status = :status',
        names: { '#status': 'status' },
        values: { ':status': f.status },
      },
      f.path_prefix !== undefined && {
        expression: 'begins_with(#path, :path)',
        names: { '#path': 'path' },
        values: { ':path': f.path_prefix },
      },
    ]);
    const page = await queryPage(
      this.table,
      {
        KeyConditionExpression: keyCondition,
        ...filter,
        ScanIndexForward: false,
        // An audit read is never part of a read-modify-write; half the cost of a strongly consistent one.
        ConsistentRead: false,
      },
      limit,
      startKey,
      parse,
      this.budget,
    );
    return { items: page.items.filter((r): r is AuditRecord => r !== undefined), lastKey: page.lastKey };
  }
}
