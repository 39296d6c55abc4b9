import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { TableRef } from '../adapters/dynamo.js';
import { SCOPES, TOKEN_TYPES } from '../domain/scopes.js';
import { ApiKeyLimitReachedError } from '../domain/errors.js';
import { cancelledConditions, isConditionalCheckFailure, parseItem } from './item.js';
import { keys, TTL_ATTRIBUTE } from './keys.js';
import { OrgQuota } from './org-quota.js';
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
  /** When the current token was issued: at creation, then at each rotation (the age the warning header counts). */
  token_issued_at: z.string().nullable().default(null),
  /** The token replaced by the last rotation, valid until `previous_token_expires_at`. */
  previous_token_hash: z.string().nullable().default(null),
  previous_token_expires_at: z.string().nullable().default(null),
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
  issued_at: z.string().nullable().default(null),
  /**
   * A token that no longer works is kept as a tombstone (400 days, as the audit log), so a request that still
   * presents it is refused as the organization's: revoked with its key, or replaced by a later rotation.
   */
  revoked_at: z.string().nullable().default(null),
  revoked_reason: z.enum(['revoked', 'rotated_out']).nullable().default(null),
});
export type TokenRecord = z.infer<typeof tokenItem>;

/** How long a tombstone is kept: as long as the audit log keeps the lines it explains. */
const TOMBSTONE_SECONDS = 400 * 86_400;

function tokenOf(record: ApiKeyRecord, issuedAt: string, expiresAt: string | null): TokenRecord {
  return {
    api_key_id: record.api_key_id,
    organization_id: record.organization_id,
    environment: record.environment,
    type: record.type,
    scopes: record.scopes,
    expires_at: expiresAt,
    issued_at: issuedAt,
    revoked_at: null,
    revoked_reason: null,
  };
}

export function apiKeyItems(tableName: string, record: ApiKeyRecord, tokenHash: string) {
  const token = tokenOf(record, record.token_issued_at ?? record.created_at, record.expires_at);
  return [
    {
      Put: {
        TableName: tableName,
        Item: { ...keys.apiKey(record.organization_id, record.api_key_id), entity: 'api_key', ...record },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    {
      Put: {
        TableName: tableName,
        Item: { ...keys.token(tokenHash), entity: 'token', ...token },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
  ];
}

export class ApiKeyRepository {
  /** At most 50 active keys per organization; an expired key no longer counts once the cap is reached. */
  private readonly quota: OrgQuota;

  constructor(
    private readonly table: TableRef,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.quota = new OrgQuota(table, 'api_keys', (orgId) => this.countActive(orgId));
  }

  async create(record: ApiKeyRecord): Promise<void> {
    await this.quota.write(
      record.organization_id,
      apiKeyItems(this.table.tableName, record, record.token_hash),
      () => new ApiKeyLimitReachedError(this.quota.max),
    );
  }

  /** Keys neither revoked nor past their `expires_at`. */
  private async countActive(orgId: string): Promise<number> {
    const now = this.now().toISOString();
    let active = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.list(orgId, 100, start);
      active += page.items.filter((k) => !k.revoked_at && (k.expires_at === null || k.expires_at > now)).length;
      start = page.lastKey;
    } while (start);
    return active;
  }

  async findByTokenHash(tokenHash: string): Promise<TokenRecord | undefined> {
    const out = await this.table.doc.send(
      new GetCommand({ TableName: this.table.tableName, Key: keys.token(tokenHash), ConsistentRead: true }),
    );
    return out.Item ? parseItem(tokenItem, out.Item, 'token') : undefined;
  }

  async get(orgId: string, apiKeyId: string): Promise<ApiKeyRecord | undefined> {
    const out = await this.table.doc.send(
      new GetCommand({ TableName: this.table.tableName, Key: keys.apiKey(orgId, apiKeyId), ConsistentRead: true }),
    );
    return out.Item ? parseItem(apiKeyRecord, out.Item, 'api key') : undefined;
  }

  async list(orgId: string, limit: number, startKey?: Record<string, unknown>): Promise<Page<ApiKeyRecord>> {
    return queryPage(
      this.table,
      {
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': keys.orgPartition(orgId), ':prefix': keys.apiKeyPrefix },
        ScanIndexForward: false,
        // The cap's recount reads through this: a key committed a moment ago must be counted.
        ConsistentRead: true,
      },
      limit,
      startKey,
      (item) => parseItem(apiKeyRecord, item, 'api key'),
    );
  }

  /**
   * A new token for the same key, in one transaction: the key points at the new hash, the new token item appears,
   * and the old token's item gets an expiry at the end of the grace period (or the key's own, if sooner). A token
   * left over from an earlier rotation stops at once: at most two tokens of a key are ever valid.
   */
  async rotate(
    key: ApiKeyRecord,
    next: { hash: string; hint: string },
    at: string,
    graceEndsAt: string,
  ): Promise<ApiKeyRecord> {
    const t = this.table.tableName;
    const oldExpiry = key.expires_at !== null && key.expires_at < graceEndsAt ? key.expires_at : graceEndsAt;
    const rotated: ApiKeyRecord = {
      ...key,
      token_hash: next.hash,
      token_hint: next.hint,
      token_issued_at: at,
      previous_token_hash: key.token_hash,
      previous_token_expires_at: oldExpiry,
    };
    await this.table.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: t,
              Item: { ...keys.apiKey(key.organization_id, key.api_key_id), entity: 'api_key', ...rotated },
              ConditionExpression: 'token_hash = :old AND revoked_at = :null',
              ExpressionAttributeValues: { ':old': key.token_hash, ':null': null },
            },
          },
          {
            Put: {
              TableName: t,
              Item: { ...keys.token(next.hash), entity: 'token', ...tokenOf(key, at, key.expires_at) },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          {
            Update: {
              TableName: t,
              Key: keys.token(key.token_hash),
              UpdateExpression: 'SET expires_at = :expiry',
              ConditionExpression: 'attribute_exists(PK)',
              ExpressionAttributeValues: { ':expiry': oldExpiry },
            },
          },
          ...(key.previous_token_hash ? [this.tombstone(key.previous_token_hash, at, 'rotated_out')] : []),
        ],
      }),
    );
    return rotated;
  }

  /** The token stops working for good, and stays findable as the organization's (see `revoked_at`). */
  private tombstone(hash: string, at: string, reason: 'revoked' | 'rotated_out') {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.token(hash),
        UpdateExpression: 'SET revoked_at = :at, revoked_reason = :reason, #ttl = :ttl',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: {
          ':at': at,
          ':reason': reason,
          ':ttl': Math.floor(Date.parse(at) / 1000) + TOMBSTONE_SECONDS,
        },
      },
    };
  }

  /**
   * Marks the key revoked and turns every token it has into a tombstone, in one transaction conditioned on the
   * tokens it read: a rotation that committed in between fails the condition ('changed'), and the caller reads the
   * key again, so no token handed out by a concurrent rotation outlives the revocation.
   */
  async revoke(key: ApiKeyRecord, revokedAt: string): Promise<'revoked' | 'already_revoked' | 'changed'> {
    try {
      await this.table.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.table.tableName,
                Key: keys.apiKey(key.organization_id, key.api_key_id),
                UpdateExpression: 'SET revoked_at = :now',
                ConditionExpression: 'attribute_exists(PK) AND revoked_at = :null AND token_hash = :hash',
                ExpressionAttributeValues: { ':now': revokedAt, ':null': null, ':hash': key.token_hash },
              },
            },
            this.tombstone(key.token_hash, revokedAt, 'revoked'),
            ...(key.previous_token_hash ? [this.tombstone(key.previous_token_hash, revokedAt, 'revoked')] : []),
          ],
        }),
      );
      // A key past its expiry was already left out by the last recount (or will be by the next): giving its unit back
      // too would let the counter fall below the truth. Only a key that was active gives its place back.
      if (key.expires_at === null || key.expires_at > revokedAt) await this.quota.release(key.organization_id);
      return 'revoked';
    } catch (err) {
      const failed = cancelledConditions(err);
      if (!failed) throw err;
      const now = await this.get(key.organization_id, key.api_key_id);
      if (now?.revoked_at) return 'already_revoked';
      return 'changed';
    }
  }

  /** Best effort and at most once a minute per key: the request path never waits on it failing. */
  async touchLastUsed(orgId: string, apiKeyId: string, at: string): Promise<void> {
    const minuteAgo = new Date(Date.parse(at) - 60_000).toISOString();
    try {
      await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.apiKey(orgId, apiKeyId),
          UpdateExpression: 'SET last_used_at = :at',
          ConditionExpression:
            'attribute_exists(PK) AND (attribute_not_exists(last_used_at) OR last_used_at = :null OR last_used_at < :minuteAgo)',
          ExpressionAttributeValues: { ':at': at, ':null': null, ':minuteAgo': minuteAgo },
        }),
      );
    } catch (err) {
      if (!isConditionalCheckFailure(err)) throw err;
    }
  }
}
