import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../adapters/dynamo.js';
import { intervalMs, toleranceMs, type Limit } from '../domain/rate-limit.js';
import { isConditionalCheckFailure } from './item.js';
import { keys } from './keys.js';

export interface Grant {
  /** How many of the requested cells were granted (0 to `wanted`). */
  granted: number;
  /** The TAT after the grant (or the stored one when nothing was granted). */
  tat: number;
}

/**
 * GCRA over DynamoDB with no read: one conditional UpdateItem takes `wanted` cells at once (two when the bucket
 * was idle), and a refused condition returns the stored TAT, which says how many would fit. Other containers only
 * meet this one at the condition, so the limit holds whatever the number of instances.
 */
export class RateLimitRepository {
  constructor(private readonly table: TableRef) {}

  async take(bucketKey: string, limit: Limit, now: number, wanted = 1): Promise<Grant> {
    const T = intervalMs(limit);
    const tau = toleranceMs(limit);
    const key = keys.rateLimit(bucketKey);
    const ttl = Math.ceil((now + 2 * 60_000) / 1000);
    /** Cells that fit when TAT is `tat`: while max(tat, now) + (j − 1)·T − now ≤ τ. */
    const fit = (tat: number) => Math.max(0, Math.min(wanted, Math.floor((now + tau - Math.max(tat, now)) / T) + 1));
    let k = wanted;
    for (let attempt = 0; attempt < 10; attempt++) {
      let stored: number | undefined;
      try {
        // The busy case: TAT ahead of now, and all k cells fit under the tolerance.
        const out = await this.table.doc.send(
          new UpdateCommand({
            TableName: this.table.tableName,
            Key: key,
            UpdateExpression: 'SET tat = tat + :kt, #ttl = :ttl',
            ConditionExpression: 'tat BETWEEN :now AND :edge',
            ExpressionAttributeNames: { '#ttl': 'ttl' },
            ExpressionAttributeValues: { ':kt': k * T, ':now': now, ':edge': now + tau - (k - 1) * T, ':ttl': ttl },
            ReturnValues: 'UPDATED_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { granted: k, tat: Number(out.Attributes!.tat) };
      } catch (err) {
        if (!isConditionalCheckFailure(err)) throw err;
        // The old item comes back in the wire format ({ N: "…" }); accept a plain number too.
        const old = (err as { Item?: Record<string, unknown> }).Item?.tat as { N?: string } | number | undefined;
        stored = old === undefined ? undefined : Number(typeof old === 'object' ? old.N : old);
      }
      if (stored !== undefined && stored >= now) {
        k = fit(stored);
        if (k === 0) return { granted: 0, tat: stored };
        continue; // fewer cells fit than asked: ask again for those
      }
      try {
        // The idle case: no state yet, or TAT in the past: the bucket is full.
        k = Math.min(wanted, limit.perMinute);
        await this.table.doc.send(
          new UpdateCommand({
            TableName: this.table.tableName,
            Key: key,
            UpdateExpression: 'SET tat = :fresh, entity = :entity, #ttl = :ttl',
            ConditionExpression: 'attribute_not_exists(tat) OR tat < :now',
            ExpressionAttributeNames: { '#ttl': 'ttl' },
            ExpressionAttributeValues: { ':fresh': now + k * T, ':now': now, ':entity': 'rate_limit', ':ttl': ttl },
          }),
        );
        return { granted: k, tat: now + k * T };
      } catch (err) {
        if (!isConditionalCheckFailure(err)) throw err;
        k = wanted; // another request moved TAT between the two writes: look again
      }
    }
    throw new Error(`Rate limit state for ${bucketKey} kept changing under contention`);
  }
}
