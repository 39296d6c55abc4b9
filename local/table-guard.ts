import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  allows,
  TABLE_ACCESS,
  type ComputeName,
  type ReadAction,
  type WriteAction,
} from '../shared/api/table-access.js';

/**
 * The local stand-in for the functions' IAM roles on the table. On AWS each function's role allows exactly its
 * `TABLE_ACCESS` (infra/constructs/service-access.ts); the local stack runs every function in one or two
 * processes with one client, so this middleware checks each call against the grant of the function it is made
 * for, and refuses what IAM would refuse, with the same error name. The end-to-end suite thereby proves the
 * declarations are enough for everything the code does, and the infra tests prove the templates grant no more.
 *
 * A call made outside any function (the admin CLI, a test's own setup) is not checked.
 */
const scope = new AsyncLocalStorage<ComputeName>();

/** Runs `fn` as the function `name`: its table calls are checked against that function's grant. */
export function asFunction<T>(name: ComputeName, fn: () => T): T {
  return scope.run(name, fn);
}

/** An item or key, marshalled (`{ PK: { S } }`, the low-level client) or not (the document client, before it marshals). */
type AttributeMap = Record<string, { S?: string } | string | undefined>;
interface Call {
  action: ReadAction | WriteAction;
  target: { pk: string } | { index: string };
}

const stringOf = (value: { S?: string } | string | undefined) => (typeof value === 'string' ? value : (value?.S ?? ''));
const pkOf = (item: AttributeMap | undefined) => stringOf(item?.PK);

/** The item actions a command performs, each with the partition key it touches (or the index it queries). */
export function callsOf(command: string, input: Record<string, unknown>): Call[] {
  const i = input as {
    Key?: AttributeMap;
    Item?: AttributeMap;
    IndexName?: string;
    KeyConditionExpression?: string;
    ExpressionAttributeValues?: AttributeMap;
    RequestItems?: Record<
      string,
      { Keys?: AttributeMap[] } | { PutRequest?: { Item: AttributeMap }; DeleteRequest?: { Key: AttributeMap } }[]
    >;
    TransactItems?: Record<string, { Key?: AttributeMap; Item?: AttributeMap } | undefined>[];
  };
  switch (command) {
    case 'GetItemCommand':
    case 'DeleteItemCommand':
    case 'UpdateItemCommand':
      return [{ action: command.replace('Command', '') as ReadAction | WriteAction, target: { pk: pkOf(i.Key) } }];
    case 'PutItemCommand':
      return [{ action: 'PutItem', target: { pk: pkOf(i.Item) } }];
    case 'QueryCommand': {
      if (i.IndexName) return [{ action: 'Query', target: { index: i.IndexName } }];
      const placeholder = /\bPK\s*=\s*(:\w+)/.exec(i.KeyConditionExpression ?? '')?.[1] ?? '';
      return [{ action: 'Query', target: { pk: stringOf(i.ExpressionAttributeValues?.[placeholder]) } }];
    }
    case 'BatchGetItemCommand':
      return Object.values(i.RequestItems ?? {}).flatMap((r) =>
        ((r as { Keys?: AttributeMap[] }).Keys ?? []).map((k) => ({
          action: 'BatchGetItem' as const,
          target: { pk: pkOf(k) },
        })),
      );
    case 'BatchWriteItemCommand':
      return Object.values(i.RequestItems ?? {}).flatMap((r) =>
        (r as { PutRequest?: { Item: AttributeMap }; DeleteRequest?: { Key: AttributeMap } }[]).map((w) => ({
          action: 'BatchWriteItem' as const,
          target: { pk: pkOf(w.PutRequest?.Item ?? w.DeleteRequest?.Key) },
        })),
      );
    case 'TransactWriteItemsCommand':
    case 'TransactGetItemsCommand':
      return (i.TransactItems ?? []).flatMap((t) =>
        Object.entries(t).flatMap(([kind, op]) => {
          if (!op) return [];
          const action = (
            {
              Put: 'PutItem',
              Update: 'UpdateItem',
              Delete: 'DeleteItem',
              ConditionCheck: 'ConditionCheckItem',
              Get: 'GetItem',
            } as const
          )[kind as 'Put'];
          return action ? [{ action, target: { pk: pkOf(op.Key ?? op.Item) } }] : [];
        }),
      );
    default:
      // Scan, table management: no function is granted them.
      return [{ action: command.replace('Command', '') as ReadAction, target: { pk: '' } }];
  }
}

/** Installs the check on a client (the local stack's and the end-to-end tests' only). */
export function guardTable(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = scope.getStore();
      if (name !== undefined) {
        const access = TABLE_ACCESS[name];
        for (const call of callsOf(String(context.commandName), args.input as Record<string, unknown>)) {
          if (!allows(access, call.action, call.target)) {
            const on =
              'index' in call.target ? `index ${call.target.index}` : `partition ${call.target.pk || '(none)'}`;
            throw Object.assign(
              new Error(
                `${name} is not authorized to perform dynamodb:${call.action} on ${on} (shared/api/table-access.ts)`,
              ),
              { name: 'AccessDeniedException', $fault: 'client' },
            );
          }
        }
      }
      return next(args);
    },
    { step: 'initialize', priority: 'low', name: 'localTableGuard', override: true },
  );
}
