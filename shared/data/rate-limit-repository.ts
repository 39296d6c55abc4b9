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

/** Buckets whose last TAT a repository remembers before it forgets them all (a hint, never the state). */
const MAX_REMEMBERED = 10_000;

/**
 * GCRA over DynamoDB with no read: one conditional UpdateItem takes `wanted` cells at once, and a refused condition
 * returns the stored TAT, which says how many would fit. Other containers only meet this one at the condition, so
 * the limit holds whatever the number of instances.
 *
 * There are two updates, one for a bucket whose TAT is ahead of now (busy: add k·T) and one for a bucket whose
 * TAT has passed (idle: set it to now + k·T), and the condition of each refuses the other case. Which one to try
 * first is taken from the TAT this repository last saw for the bucket: a bucket whose traffic stays well under
 * its limit (TAT behind now at every write, as with a high limit) is idle every time, and trying the busy update
 * first cost it a refused write before every grant. The hint only orders the attempts: the conditions, evaluated
 * by the table, decide, so a stale hint costs one refused write, as before, and never a wrong grant. (TAT only moves
 * forward, so the hint is never ahead of the table.)
 */
export class RateLimitRepository {
  private readonly lastSeen = new Map<string, number>();

  constructor(private readonly table: TableRef) {}

  async take(bucketKey: string, limit: Limit, now: number, wanted = 1): Promise<Grant> {
    const T = intervalMs(limit);
    const tau = toleranceMs(limit);
    const key = keys.rateLimit(bucketKey);
    const ttl = Math.ceil((now + 2 * 60_000) / 1000);
    /** Cells that fit when TAT is `tat`: while max(tat, now) + (j − 1)·T − now ≤ τ. */
    const fit = (tat: number) => Math.max(0, Math.min(wanted, Math.floor((now + tau - Math.max(tat, now)) / T) + 1));
    const seen = (tat: number) => {
      if (this.lastSeen.size >= MAX_REMEMBERED && !this.lastSeen.has(bucketKey)) this.lastSeen.clear();
      this.lastSeen.set(bucketKey, tat);
    };
    /** The TAT a refused condition returned: the old item in the wire format ({ N: "…" }), or a plain number. */
    const storedOf = (err: unknown) => {
      const old = (err as { Item?: Record<string, unknown> }).Item?.tat as { N?: string } | number | undefined;
      return old === undefined ? undefined : Number(typeof old === 'object' ? old.N : old);
    };
    const hint = this.lastSeen.get(bucketKey);
    // Unknown: the busy update first, as a bucket in use by other containers most likely is.
    let idle = hint !== undefined && hint < now;
    let k = wanted;
    for (let attempt = 0; attempt < 10; attempt++) {
      if (!idle) {
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
          const tat = Number(out.Attributes!.tat);
          seen(tat);
          return { granted: k, tat };
        } catch (err) {
          if (!isConditionalCheckFailure(err)) throw err;
          stored = storedOf(err);
        }
        if (stored !== undefined && stored >= now) {
          seen(stored);
          k = fit(stored);
          if (k === 0) return { granted: 0, tat: stored };
          continue; // fewer cells fit than asked: ask again for those
        }
        idle = true;
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
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        seen(now + k * T);
        return { granted: k, tat: now + k * T };
      } catch (err) {
        if (!isConditionalCheckFailure(err)) throw err;
        // Another request moved TAT ahead of now between the hint and this write: the busy case, with what it holds.
        const stored = storedOf(err);
        idle = false;
        if (stored !== undefined && stored >= now) {
          seen(stored);
          k = fit(stored);
          if (k === 0) return { granted: 0, tat: stored };
        } else {
          k = wanted;
        }
      }
    }
    throw new Error(`Rate limit state for ${bucketKey} kept changing under contention`);
  }
}
