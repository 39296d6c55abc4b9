import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../adapters/dynamo.js';
import { logger } from '../adapters/logger.js';
import { ConcurrentModificationError, type DomainError } from '../domain/errors.js';
import { backoff } from './batch.js';
import { isConditionalCheckFailure, Transactions, type TransactItems } from './item.js';
import { keys } from './keys.js';

/** The caps of CONTRACT §3: what an organization may hold at once. */
export const QUOTAS = { api_keys: 50, webhooks: 10 } as const;
export type QuotaName = keyof typeof QUOTAS;

/**
 * A per-organization cap that holds under concurrency: one counter per organization (`ORG#<org>` / `QUOTAS`), taken
 * in the same transaction as the item it counts, on the condition that it is below the cap. Fifty-one concurrent
 * creations cannot all pass a count read beforehand; here the fifty-first fails its condition.
 *
 * The counter may only ever be too high, never too low:
 * - it is released (decremented) after the counted thing is gone, best effort: a crash in between leaves it high;
 * - what leaves on its own (an API key reaching its `expires_at`) is not released at all;
 * - an organization created before the counter existed has none.
 * So when a take fails its condition, the cap is checked against the truth: `count` recounts, the counter is set to
 * the true figure (on the condition nobody moved it meanwhile) and the take is tried again. A full organization is
 * refused only on a true count.
 */
export class OrgQuota {
  private readonly transactions: Transactions;

  constructor(
    private readonly table: TableRef,
    readonly name: QuotaName,
    /** The true count, read from the items themselves. */
    private readonly count: (orgId: string) => Promise<number>,
    readonly max: number = QUOTAS[name],
  ) {
    this.transactions = new Transactions(table);
  }

  private takeItem(orgId: string): TransactItems[number] {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.quotas(orgId),
        UpdateExpression: 'ADD #q :one',
        ConditionExpression: '#q < :max',
        ExpressionAttributeNames: { '#q': this.name },
        ExpressionAttributeValues: { ':one': 1, ':max': this.max },
      },
    };
  }

  /**
   * Writes `items` and takes one unit of the quota, atomically. `full` is thrown when the organization is truly at
   * its cap; a condition of `items` themselves failing is a concurrent modification.
   */
  async write(orgId: string, items: TransactItems, full: () => DomainError): Promise<void> {
    for (let attempt = 0; attempt < 8; attempt++) {
      const outcome = await this.transactions.write([...items, this.takeItem(orgId)]);
      if (outcome === 'ok') return;
      if (outcome.slice(0, -1).some(Boolean)) throw new ConcurrentModificationError();
      if (outcome.at(-1)) {
        if (!(await this.recount(orgId))) throw full();
        continue;
      }
      // Lost to concurrent transactions on the same counter past the client's own retries (createDocumentClient):
      // many creations racing at a cap do that, so try again shortly.
      await backoff(attempt);
    }
    throw new ConcurrentModificationError();
  }

  /** Sets the counter to the true count; whether there is room under the cap. */
  private async recount(orgId: string): Promise<boolean> {
    const stored = await this.table.doc.send(
      new GetCommand({ TableName: this.table.tableName, Key: keys.quotas(orgId), ConsistentRead: true }),
    );
    const before = stored.Item?.[this.name] as number | undefined;
    const actual = await this.count(orgId);
    if (actual !== before) {
      try {
        await this.table.doc.send(
          new UpdateCommand({
            TableName: this.table.tableName,
            Key: keys.quotas(orgId),
            UpdateExpression: 'SET #q = :actual',
            // An organization older than the counter has none yet.
            ConditionExpression: before === undefined ? 'attribute_not_exists(#q)' : '#q = :before',
            ExpressionAttributeNames: { '#q': this.name },
            ExpressionAttributeValues: { ':actual': actual, ...(before !== undefined && { ':before': before }) },
          }),
        );
      } catch (err) {
        // Someone took or released meanwhile: the caller tries again against the moved counter.
        if (!isConditionalCheckFailure(err)) throw err;
        return true;
      }
    }
    return actual < this.max;
  }

  /** One unit back, after the counted thing is gone. Best effort: a counter left high is corrected at the cap. */
  async release(orgId: string): Promise<void> {
    try {
      await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.quotas(orgId),
          UpdateExpression: 'ADD #q :minus',
          ConditionExpression: '#q > :zero',
          ExpressionAttributeNames: { '#q': this.name },
          ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
        }),
      );
    } catch (err) {
      // Never fails what already happened: a counter left high is corrected when the cap is reached.
      if (!isConditionalCheckFailure(err))
        logger.warn('quota counter not released', { quota: this.name, organization_id: orgId, error: err as Error });
    }
  }
}
