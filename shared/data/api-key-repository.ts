import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { TableRef } from '../adapters/dynamo.js';
import { SCOPES, TOKEN_TYPES } from '../domain/scopes.js';
import { cancelledConditions, isConditionalCheckFailure, parseItem } from './item.js';
import { keys } from './keys.js';
import { queryPage, type Page } from './paginate.js';

const apiKeyRecord = z.object({
  api_key_id: z.string(),
  organization_id: z.string(),
  environment: z.enum(['sandbox', 'production']),
  name: z.string(),
  type: z.enum(TOKEN_TYPES),
  scopes: z.array(z.enum(SCOPES)),
  token_hint: z.string(),
  token_hash: z.string(),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  last_used_at: z.string().nullable().default(null),
});
export type ApiKeyRecord = z.infer<typeof apiKeyRecord>;

/** The item authentication reads: found by the token's hash in one strongly consistent GetItem. */
const tokenItem = z.object({
  api_key_id: z.string(),
  organization_id: z.string(),
  environment: z.enum(['sandbox', 'production']),
  type: z.enum(TOKEN_TYPES),
  scopes: z.array(z.enum(SCOPES)),
  expires_at: z.string().nullable(),
});
export type TokenRecord = z.infer<typeof tokenItem>;

export function apiKeyItems(tableName: string, record: ApiKeyRecord, tokenHash: string) {
  const token: TokenRecord = {
    api_key_id: record.api_key_id,
    organization_id: record.organization_id,
    environment: record.environment,
    type: record.type,
    scopes: record.scopes,
    expires_at: record.expires_at,
  };
  return [
    { Put: { TableName: tableName, Item: { ...keys.apiKey(record.organization_id, record.api_key_id), entity: 'api_key', ...record }, ConditionExpression: 'attribute_not_exists(PK)' } },
    { Put: { TableName: tableName, Item: { ...keys.token(tokenHash), entity: 'token', ...token }, ConditionExpression: 'attribute_not_exists(PK)' } },
  ];
}

export class ApiKeyRepository {
  constructor(private readonly table: TableRef) {}

  async create(record: ApiKeyRecord): Promise<void> {
    await this.table.doc.send(new TransactWriteCommand({ TransactItems: apiKeyItems(this.table.tableName, record, record.token_hash) }));
  }

  async findByTokenHash(tokenHash: string): Promise<TokenRecord | undefined> {
    const out = await this.table.doc.send(new GetCommand({ TableName: this.table.tableName, Key: keys.token(tokenHash), ConsistentRead: true }));
    return out.Item ? parseItem(tokenItem, out.Item, 'token') : undefined;
  }

  async get(orgId: string, apiKeyId: string): Promise<ApiKeyRecord | undefined> {
    const out = await this.table.doc.send(new GetCommand({ TableName: this.table.tableName, Key: keys.apiKey(orgId, apiKeyId), ConsistentRead: true }));
    return out.Item ? parseItem(apiKeyRecord, out.Item, 'api key') : undefined;
  }

  async list(orgId: string, limit: number, startKey?: Record<string, unknown>): Promise<Page<ApiKeyRecord>> {
    return queryPage(this.table, {
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.orgPartition(orgId), ':prefix': keys.apiKeyPrefix },
      ScanIndexForward: false,
    }, limit, startKey, (item) => parseItem(apiKeyRecord, item, 'api key'));
  }

  /** Marks the key revoked and deletes its token item in one transaction: the next lookup finds nothing. */
  async revoke(key: ApiKeyRecord, revokedAt: string): Promise<'revoked' | 'already_revoked'> {
    try {
      await this.table.doc.send(new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: this.table.tableName,
              Key: keys.apiKey(key.organization_id, key.api_key_id),
              UpdateExpression: 'SET revoked_at = :now',
              ConditionExpression: 'attribute_exists(PK) AND revoked_at = :null',
              ExpressionAttributeValues: { ':now': revokedAt, ':null': null },
            },
          },
          { Delete: { TableName: this.table.tableName, Key: keys.token(key.token_hash) } },
        ],
      }));
      return 'revoked';
    } catch (err) {
      if (cancelledConditions(err)?.[0]) return 'already_revoked';
      throw err;
    }
  }

  /** Best effort and at most once a minute per key: the request path never waits on it failing. */
  async touchLastUsed(orgId: string, apiKeyId: string, at: string): Promise<void> {
    const minuteAgo = new Date(Date.parse(at) - 60_000).toISOString();
    try {
      await this.table.doc.send(new UpdateCommand({
        TableName: this.table.tableName,
        Key: keys.apiKey(orgId, apiKeyId),
        UpdateExpression: 'SET last_used_at = :at',
        ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(last_used_at) OR last_used_at = :null OR last_used_at < :minuteAgo)',
        ExpressionAttributeValues: { ':at': at, ':null': null, ':minuteAgo': minuteAgo },
      }));
    } catch (err) {
      if (!isConditionalCheckFailure(err)) throw err;
    }
  }
}
