import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../adapters/dynamo.js';
import { backoff } from './batch.js';
import type { z } from 'zod';

/** Operations of one DynamoDB transaction: what the repositories' `alsoWrite` parameters take and return. */
export type TransactItems = NonNullable<TransactWriteCommandInput['TransactItems']>;

/** Items read back are checked against their schema: a corrupt or foreign item fails loudly, never silently. */
export function parseItem<S extends z.ZodType>(schema: S, item: Record<string, unknown>, entity: string): z.infer<S> {
  const parsed = schema.safeParse(item);
  if (!parsed.success) {
    throw new Error(
      `Stored ${entity} item does not match its schema: ${parsed.error.issues.map((i) => i.path.join('.')).join(', ')}`,
    );
  }
  return parsed.data;
}

export function isConditionalCheckFailure(err: unknown): boolean {
  return (err as { name?: string })?.name === 'ConditionalCheckFailedException';
}

/** For a cancelled transaction, which of its operations failed their condition (by index). */
export function cancelledConditions(err: unknown): boolean[] | undefined {
  const e = err as { name?: string; CancellationReasons?: { Code?: string }[] };
  if (e?.name !== 'TransactionCanceledException' || !e.CancellationReasons) return undefined;
  return e.CancellationReasons.map((r) => r.Code === 'ConditionalCheckFailed');
}

/**
 * Writes the operations of several repositories in one transaction: 'ok', or for a cancelled transaction which
 * operations failed their condition (all false when it lost to a concurrent transaction: read again and retry).
 */
export class Transactions {
  constructor(private readonly table: TableRef) {}

  async write(items: TransactItems): Promise<'ok' | boolean[]> {
    try {
      await this.table.doc.send(new TransactWriteCommand({ TransactItems: items }));
      return 'ok';
    } catch (err) {
      const failed = cancelledConditions(err);
      if (!failed) throw err;
      return failed;
    }
  }

  /**
   * As `write`, but a transaction cancelled only because it met another one on an item (no condition failed) is
   * tried again with backoff: what it was to record must not be dropped, nor answered as done, on a mere conflict.
   */
  async writeThroughConflicts(items: TransactItems, attempts = 8): Promise<'ok' | boolean[]> {
    for (let attempt = 1; ; attempt++) {
      const out = await this.write(items);
      if (out === 'ok' || out.some(Boolean)) return out;
      if (attempt >= attempts) throw new Error('The transaction kept meeting others: nothing was written');
      await backoff(attempt);
    }
  }
}
