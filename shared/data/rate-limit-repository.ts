import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../adapters/dynamo.js';
import { allowedDecision, intervalMs, refusedDecision, toleranceMs, type Limit, type RateDecision } from '../domain/rate-limit.js';
import { isConditionalCheckFailure } from './item.js';
import { keys } from './keys.js';

/**
 * GCRA over DynamoDB with no read: each request is one conditional UpdateItem (two when the bucket was idle), and
 * a refused condition returns the stored TAT, which says why. Concurrent requests on other containers only meet at
 * the condition, so the limit holds whatever the number of instances.
 */
export class RateLimitRepository {
  constructor(private readonly table: TableRef) {}

  async take(bucketKey: string, limit: Limit, now: number): Promise<RateDecision> {
    const T = intervalMs(limit);
    const tau = toleranceMs(limit);
    const key = keys.rateLimit(bucketKey);
    const ttl = Math.ceil((now + 2 * 60_000) / 1000);
    for (let attempt = 0; attempt < 10; attempt++) {
      let stored: number | undefined;
      try {
        // The busy case: TAT is ahead of now but within the tolerance, so this request fits.
        const out = await this.table.doc.send(new UpdateCommand({
          TableName: this.table.tableName, Key: key,
          UpdateExpression: 'SET tat = tat + :t, #ttl = :ttl',
          ConditionExpression: 'tat BETWEEN :now AND :edge',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':t': T, ':now': now, ':edge': now + tau, ':ttl': ttl },
          ReturnValues: 'UPDATED_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }));
        return allowedDecision(limit, now, Number(out.Attributes!.tat));
      } catch (err) {
        if (!isConditionalCheckFailure(err)) throw err;
        // The old item comes back in the wire format ({ N: "…" }); accept a plain number too.
        const old = (err as { Item?: Record<string, unknown> }).Item?.tat as { N?: string } | number | undefined;
        stored = old === undefined ? undefined : Number(typeof old === 'object' ? old.N : old);
      }
      if (stored !== undefined && stored > now + tau) return refusedDecision(limit, now, stored);
      try {
        // The idle case: no state yet, or TAT already in the past: the bucket is full.
        await this.table.doc.send(new UpdateCommand({
          TableName: this.table.tableName, Key: key,
          UpdateExpression: 'SET tat = :fresh, entity = :entity, #ttl = :ttl',
          ConditionExpression: 'attribute_not_exists(tat) OR tat < :now',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':fresh': now + T, ':now': now, ':entity': 'rate_limit', ':ttl': ttl },
        }));
        return allowedDecision(limit, now, now + T);
      } catch (err) {
        if (!isConditionalCheckFailure(err)) throw err;
        // Another request moved TAT between the two writes: look again.
      }
    }
    throw new Error(`Rate limit state for ${bucketKey} kept changing under contention`);
  }
}
