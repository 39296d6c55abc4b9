import { createHash } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { TableRef } from '../adapters/dynamo.js';
import { ConcurrentModificationError, WebhookLimitReachedError } from '../domain/errors.js';
import { EVENT_TYPES, UNRELIABLE_AFTER_FAILED_EVENTS, WEBHOOK_STATUSES } from '../domain/events.js';
import { isConditionalCheckFailure, parseItem, type TransactItems } from './item.js';
import { keys } from './keys.js';
import { OrgQuota } from './org-quota.js';
import { queryPage, type Page } from './paginate.js';

const webhookItem = z.object({
  webhook_id: z.string(),
  organization_id: z.string(),
  url: z.string(),
  events: z.array(z.enum(EVENT_TYPES)).nullable(),
  description: z.string().nullable(),
  status: z.enum(WEBHOOK_STATUSES),
  /** Envelope-encrypted signing secrets, newest first; a rotated-out one carries its expiry. */
  secrets: z.array(z.object({ ciphertext: z.string(), created_at: z.string(), expires_at: z.string().nullable() })),
  consecutive_failures: z.number().int(),
  version: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type WebhookRecord = z.infer<typeof webhookItem>;

const parse = (item: Record<string, unknown>) => parseItem(webhookItem, item, 'webhook');

export class WebhookRepository {
  /** At most 10 endpoints per organization, whatever their status. */
  private readonly quota: OrgQuota;

  constructor(private readonly table: TableRef) {
    this.quota = new OrgQuota(table, 'webhooks', async (orgId) => (await this.all(orgId)).length);
  }

  async create(w: WebhookRecord): Promise<void> {
    await this.quota.write(
      w.organization_id,
      [
        {
          Put: {
            TableName: this.table.tableName,
            Item: { ...keys.webhook(w.organization_id, w.webhook_id), entity: 'webhook', ...w },
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
      ],
      () => new WebhookLimitReachedError(this.quota.max),
    );
  }

  async get(orgId: string, webhookId: string): Promise<WebhookRecord | undefined> {
    const out = await this.table.doc.send(
      new GetCommand({ TableName: this.table.tableName, Key: keys.webhook(orgId, webhookId), ConsistentRead: true }),
    );
    return out.Item ? parse(out.Item) : undefined;
  }

  async list(orgId: string, limit: number, startKey?: Record<string, unknown>): Promise<Page<WebhookRecord>> {
    return queryPage(
      this.table,
      {
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': keys.orgPartition(orgId), ':prefix': keys.webhookPrefix },
        ConsistentRead: true,
      },
      limit,
      startKey,
      parse,
    );
  }

  /** Every endpoint of the organization (an organization has few): the fan-out reads them all. */
  async all(orgId: string): Promise<WebhookRecord[]> {
    const out: WebhookRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.list(orgId, 100, start);
      out.push(...page.items);
      start = page.lastKey;
    } while (start);
    return out;
  }

  /** Whole-record replace under optimistic concurrency (`version`). */
  async replace(previous: WebhookRecord, next: WebhookRecord): Promise<void> {
    try {
      await this.table.doc.send(
        new PutCommand({
          TableName: this.table.tableName,
          Item: { ...keys.webhook(next.organization_id, next.webhook_id), entity: 'webhook', ...next },
          ConditionExpression: 'version = :v',
          ExpressionAttributeValues: { ':v': previous.version },
        }),
      );
    } catch (err) {
      if (isConditionalCheckFailure(err)) throw new ConcurrentModificationError();
      throw err;
    }
  }

  async delete(orgId: string, webhookId: string): Promise<boolean> {
    try {
      await this.table.doc.send(
        new DeleteCommand({
          TableName: this.table.tableName,
          Key: keys.webhook(orgId, webhookId),
          ConditionExpression: 'attribute_exists(PK)',
        }),
      );
      await this.quota.release(orgId);
      return true;
    } catch (err) {
      if (isConditionalCheckFailure(err)) return false;
      throw err;
    }
  }

  /**
   * The endpoint's side of a delivery closing, written in the same transaction as the close
   * (EventRepository.recordAttempt): a failed event counts one more consecutive failure, a success resets the count.
   * In one transaction, a worker that dies around the close can neither lose a failed event nor count it twice.
   */
  outcomeItems(orgId: string, webhookId: string, outcome: 'succeeded' | 'failed', at: string): TransactItems {
    return [
      {
        Update: {
          TableName: this.table.tableName,
          Key: keys.webhook(orgId, webhookId),
          UpdateExpression:
            outcome === 'failed'
              ? 'ADD consecutive_failures :n SET updated_at = :at'
              : 'SET consecutive_failures = :n, updated_at = :at',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: { ':n': outcome === 'failed' ? 1 : 0, ':at': at },
        },
      },
    ];
  }

  /**
   * At the fifth failed event in a row an active endpoint is marked unreliable and paused (a success in between
   * resets the count). Decided by the stored count alone, so running it again after a crash changes nothing.
   * Returns true if this call paused it.
   */
  async pauseIfUnreliable(orgId: string, webhookId: string): Promise<boolean> {
    try {
      await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.webhook(orgId, webhookId),
          UpdateExpression: 'SET #status = :unreliable, version = version + :one',
          ConditionExpression: '#status = :active AND consecutive_failures >= :limit',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':unreliable': 'unreliable',
            ':active': 'active',
            ':one': 1,
            ':limit': UNRELIABLE_AFTER_FAILED_EVENTS,
          },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailure(err)) return false;
      throw err;
    }
  }

  /**
   * Claims the one test event of the interval for the address an organization's endpoint names: 0 when claimed,
   * otherwise the seconds until the next one may be. Keyed by the URL's origin (scheme, host and port), not by the
   * endpoint nor the whole URL: deleting and registering the endpoint again, several endpoints on one host, or a
   * PATCH to another path or query of it send tests there no faster. An item of its own (a rate-limit item,
   * expiring), and one conditional write, so two concurrent requests cannot both claim it.
   */
  async claimTestEvent(orgId: string, url: string, now: Date, everySeconds: number): Promise<number> {
    const address = createHash('sha256').update(new URL(url).origin).digest('hex').slice(0, 32);
    const at = now.toISOString();
    const earliest = new Date(now.getTime() - everySeconds * 1000).toISOString();
    try {
      await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.rateLimit(`webhook-test#${orgId}#${address}`),
          UpdateExpression: 'SET last_test_at = :at, #ttl = :ttl',
          ConditionExpression: 'attribute_not_exists(last_test_at) OR last_test_at <= :earliest',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: {
            ':at': at,
            ':earliest': earliest,
            ':ttl': Math.ceil(now.getTime() / 1000) + 2 * everySeconds,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 0;
    } catch (err) {
      if (!isConditionalCheckFailure(err)) throw err;
      // The old item comes back in the wire format ({ S: "…" }), as in the rate-limit repository.
      const old = (err as { Item?: Record<string, unknown> }).Item?.last_test_at as { S?: string } | string | undefined;
      const last = typeof old === 'object' ? old.S : old;
      if (last === undefined) return everySeconds;
      const wait = Math.ceil((Date.parse(last) + everySeconds * 1000 - now.getTime()) / 1000);
      return Math.min(everySeconds, Math.max(1, wait));
    }
  }
}
