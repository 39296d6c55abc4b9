import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { TableRef } from '../adapters/dynamo.js';
import type { ConnectorRecord, ConnectorStore } from '../adapters/transfer-connector.js';
import { isConditionalCheckFailure, parseItem } from './item.js';
import { type DisbursementFileRecord, parseFileItem } from './disbursement-file-repository.js';
import { GSI2, keys } from './keys.js';
import { settingsItem } from './organization-repository.js';
import type { OrganizationSettings } from '../domain/settings.js';
import type { TransactItems } from './item.js';
import { queryAll, queryPage, type Page } from './paginate.js';

const inboundItem = z.object({
  name: z.string(),
  sha256: z.string(),
  size: z.number().int(),
  /** When the bank's server said it last modified the file (ms), if it said: with the size, what tells a file again. */
  modified: z.number().nullable().default(null),
  kind: z.enum(['acknowledgement', 'returns', 'unreadable']),
  picked_up_at: z.string(),
  /** An acknowledgement: the file it is about, and whether the bank accepted it. */
  file_id: z.string().nullable(),
  /** What was done with it: `acknowledged`, `applied`, or why nothing was. */
  outcome: z.string(),
  /** A return file: its items' outcomes by kind (`applied`: 2, `unknown_trace`: 1 …). */
  items: z.record(z.string(), z.number().int()).default({}),
});
export type InboundFileRecord = z.input<typeof inboundItem>;
/** A file picked up before, as a pass tells it again: its hash, size and modification time. */
export interface PickedUp {
  sha256: string;
  size: number;
  modified: number | null;
}

const statusItem = z.object({
  state: z.enum(['ok', 'failing']),
  reason: z.string().nullable(),
  checked_at: z.string(),
});
export type BankLinkStatus = z.infer<typeof statusItem>;

const connectorItem = z.object({
  connector_id: z.string(),
  secret_arn: z.string(),
  url: z.string(),
  trusted_host_key: z.string().optional(),
  settings_digest: z.string().optional(),
}) satisfies z.ZodType<ConnectorRecord>;

/**
 * What the bank link keeps and moves: every file picked up from the bank (by name and hash), the link's status, the
 * organizations with a link, and the files' transmission marks (kept here, out of the functions that never send).
 */
export class BankLinkRepository {
  constructor(private readonly table: TableRef) {}

  /** The files picked up so far, by name: their hash and size (all pages; a bank's folder is cleared by the bank). */
  async pickedUp(orgId: string): Promise<Map<string, PickedUp[]>> {
    const out = new Map<string, PickedUp[]>();
    const items = await queryAll(this.table, {
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.orgPartition(orgId), ':prefix': keys.inboundFilePrefix },
      ProjectionExpression: '#name, sha256, #size, modified',
      ExpressionAttributeNames: { '#name': 'name', '#size': 'size' },
      ConsistentRead: true,
    });
    for (const item of items) {
      const name = String(item.name);
      const modified = typeof item.modified === 'number' ? item.modified : null;
      out.set(name, [...(out.get(name) ?? []), { sha256: String(item.sha256), size: Number(item.size), modified }]);
    }
    return out;
  }

  /** Records a file picked up, once per name and content: false if it was recorded already. */
  async recordInbound(orgId: string, file: InboundFileRecord): Promise<boolean> {
    try {
      await this.table.doc.send(
        new PutCommand({
          TableName: this.table.tableName,
          Item: { ...keys.inboundFile(orgId, file.name, file.sha256), entity: 'inbound_file', ...file },
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailure(err)) return false;
      throw err;
    }
  }

  /** The same content met again under a new modification time: remembered, so it is not fetched at every pass. */
  async touchInbound(orgId: string, name: string, sha256: string, modified: number): Promise<void> {
    await this.table.doc.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: keys.inboundFile(orgId, name, sha256),
        UpdateExpression: 'SET modified = :modified',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':modified': modified },
      }),
    );
  }

  async listInbound(
    orgId: string,
    limit: number,
    startKey?: Record<string, unknown>,
  ): Promise<Page<InboundFileRecord>> {
    return queryPage(
      this.table,
      {
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': keys.orgPartition(orgId), ':prefix': keys.inboundFilePrefix },
        ScanIndexForward: false,
      },
      limit,
      startKey,
      (item) => parseItem(inboundItem, item, 'inbound file'),
    );
  }

  async status(orgId: string): Promise<BankLinkStatus | undefined> {
    const out = await this.table.doc.send(
      new GetCommand({ TableName: this.table.tableName, Key: keys.bankLinkStatus(orgId), ConsistentRead: true }),
    );
    return out.Item ? parseItem(statusItem, out.Item, 'bank link status') : undefined;
  }

  /** Where the connector transport keeps each organization's connector (deployed only). */
  connectorStore(): ConnectorStore {
    return {
      get: async (orgId) => {
        const out = await this.table.doc.send(
          new GetCommand({ TableName: this.table.tableName, Key: keys.bankLinkConnector(orgId), ConsistentRead: true }),
        );
        return out.Item ? parseItem(connectorItem, out.Item, 'bank connector') : undefined;
      },
      put: async (orgId, record) => {
        await this.table.doc.send(
          new PutCommand({
            TableName: this.table.tableName,
            Item: { ...keys.bankLinkConnector(orgId), entity: 'bank_connector', ...record },
          }),
        );
      },
    };
  }

  /** Forgets the last pass's outcome (the link now points elsewhere). */
  async clearStatus(orgId: string): Promise<void> {
    await this.table.doc.send(new DeleteCommand({ TableName: this.table.tableName, Key: keys.bankLinkStatus(orgId) }));
  }

  /** Records the last pass's outcome. */
  async putStatus(orgId: string, status: BankLinkStatus): Promise<void> {
    await this.table.doc.send(
      new PutCommand({
        TableName: this.table.tableName,
        Item: { ...keys.bankLinkStatus(orgId), entity: 'bank_link_status', ...status },
      }),
    );
  }

  /** Every organization with a bank link, and its settings: what the bank-link worker serves (all pages). */
  async withBankLinks(): Promise<{ organizationId: string; settings: OrganizationSettings }[]> {
    const items = await queryAll(this.table, {
      IndexName: GSI2.name,
      KeyConditionExpression: 'GSI2PK = :linked',
      ExpressionAttributeValues: { ':linked': keys.bankLinksIndex },
    });
    return items.map((item) => ({
      organizationId: String(item.GSI2SK),
      settings: parseItem(settingsItem, item, 'settings'),
    }));
  }

  /**
   * The organization's files the bank link still owes something (`ready`: to send; `transmitted`: awaiting the
   * bank's acknowledgement), oldest first, all pages: read once per pass, from the sparse index that holds only
   * those files (a file leaves it when acknowledged or withdrawn), so a pass never reads the organization's history.
   * The index lags the table by a moment: a file is read again, consistently, before it is sent.
   */
  async openFiles(orgId: string): Promise<DisbursementFileRecord[]> {
    const items = await queryAll(this.table, {
      IndexName: GSI2.name,
      KeyConditionExpression: 'GSI2PK = :open AND begins_with(GSI2SK, :org)',
      ExpressionAttributeValues: { ':open': keys.openFilesIndex, ':org': keys.openFileSort(orgId, '') },
    });
    return items.map(parseFileItem).filter((f) => f.status === 'ready' || f.status === 'transmitted');
  }

  /** The organizations the bank link owes something (a file to send, or an acknowledgement to pick up). */
  async organizationsWithOpenFiles(): Promise<Set<string>> {
    const items = await queryAll(this.table, {
      IndexName: GSI2.name,
      KeyConditionExpression: 'GSI2PK = :open',
      ProjectionExpression: 'organization_id',
      ExpressionAttributeValues: { ':open': keys.openFilesIndex },
    });
    return new Set(items.map((item) => String(item.organization_id)));
  }

  /** The file reached the bank: from `ready` only (a withdrawn file is never marked sent). False if it had moved. */
  async markTransmitted(
    file: Pick<DisbursementFileRecord, 'organization_id' | 'file_id'>,
    sent: { remote_name: string; sent_sha256: string; at: string },
  ): Promise<boolean> {
    return this.conditionally(
      file,
      'SET #status = :transmitted, transmitted_at = :at, remote_name = :name, sent_sha256 = :sha',
      '#status = :ready',
      {
        ':transmitted': 'transmitted',
        ':at': sent.at,
        ':name': sent.remote_name,
        ':sha': sent.sent_sha256,
        ':ready': 'ready',
      },
    );
  }

  /** The bank acknowledged the bytes sent: from `transmitted` only. */
  async markAcknowledged(
    file: Pick<DisbursementFileRecord, 'organization_id' | 'file_id'>,
    at: string,
  ): Promise<boolean> {
    return this.conditionally(
      file,
      'SET #status = :acknowledged, acknowledged_at = :at REMOVE GSI2PK, GSI2SK',
      '#status = :transmitted',
      {
        ':acknowledged': 'acknowledged',
        ':at': at,
        ':transmitted': 'transmitted',
      },
    );
  }

  /** Records that the file is late, once (in the transaction of its `disbursement_file.late` event). */
  lateItem(
    file: Pick<DisbursementFileRecord, 'organization_id' | 'file_id'>,
    at: string,
    /** Sent after its cut-off: late whatever the bank said since. */
    evenAcknowledged = false,
  ): TransactItems[number] {
    return {
      Update: {
        TableName: this.table.tableName,
        Key: keys.disbursementFile(file.organization_id, file.file_id),
        UpdateExpression: 'SET late_at = :at',
        // Still owed (the work list it was judged on lags a moment): an acknowledged or withdrawn file is not late.
        ConditionExpression:
          'attribute_exists(PK) AND #status IN (:ready, :transmitted, :also) AND (attribute_not_exists(late_at) OR attribute_type(late_at, :null))',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':at': at,
          ':null': 'NULL',
          ':ready': 'ready',
          ':transmitted': 'transmitted',
          ':also': evenAcknowledged ? 'acknowledged' : 'transmitted',
        },
      },
    };
  }

  private async conditionally(
    file: Pick<DisbursementFileRecord, 'organization_id' | 'file_id'>,
    update: string,
    condition: string,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    try {
      await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.disbursementFile(file.organization_id, file.file_id),
          UpdateExpression: update,
          ConditionExpression: `attribute_exists(PK) AND (${condition})`,
          ...(update.includes('#status') || condition.includes('#status')
            ? { ExpressionAttributeNames: { '#status': 'status' } }
            : {}),
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailure(err)) return false;
      throw err;
    }
  }
}
