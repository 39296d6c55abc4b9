import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { TableRef } from '../adapters/dynamo.js';
import type { OrganizationSettings } from '../domain/settings.js';
import { parseItem } from './item.js';
import { keys } from './keys.js';
import type { ApiKeyRecord } from './api-key-repository.js';
import { apiKeyItems } from './api-key-repository.js';

const organizationItem = z.object({
  organization_id: z.string(),
  name: z.string(),
  environment: z.enum(['sandbox', 'production']),
  created_at: z.string(),
});
export type Organization = z.infer<typeof organizationItem>;

/** The NACHA originator as stored: in an organization's settings, and snapshotted on each payroll run. */
export const originatorItem = z.object({
  company_name: z.string(),
  company_identification: z.string(),
  originating_dfi_identification: z.string(),
  immediate_destination: z.string(),
  immediate_destination_name: z.string(),
  immediate_origin: z.string(),
  immediate_origin_name: z.string(),
});

export const fundingAccountItem = z.object({
  routing_number: z.string(),
  account_type: z.enum(['checking', 'savings']),
  account_number_last4: z.string(),
  account_number_ciphertext: z.string(),
});

export const settingsItem = z.object({
  employment_types: z.array(z.string()),
  pay_groups: z.array(z.string()),
  pay_schedules: z.array(z.string()),
  max_net_pay_per_employee: z.string(),
  max_payroll_total: z.string(),
  originator: originatorItem,
  originator_placeholders: z.array(originatorItem.keyof()).optional(),
  funding_account: fundingAccountItem.nullable().default(null),
  file_retention_days: z.number().int().optional(),
  payroll_approval: z.enum(['automatic', 'required']).optional(),
  approval_cutoff_time: z.string().optional(),
  sequences_since: z.string().optional(),
  bank_link: z
    .object({
      host: z.string(),
      port: z.number().int(),
      username: z.string(),
      remote_inbound_dir: z.string(),
      remote_outbound_dir: z.string(),
      host_key_fingerprint: z.string(),
      cutoff_time: z.string(),
      credential: z.object({ kind: z.enum(['password', 'private_key']), ciphertext: z.string() }),
      pgp_public_key: z.string().nullable().optional(),
      pgp_key_fingerprint: z.string().nullable().optional(),
      linked_at: z.string().optional(),
    })
    .nullable()
    .optional(),
  updated_at: z.string(),
});

const fundingHoldItem = z.object({ payroll_id: z.string(), code: z.string(), since: z.string() });
/** A returned funding debit not yet re-debited or paid otherwise: while one exists, no run is accepted or approved. */
export type FundingHold = z.infer<typeof fundingHoldItem>;

export class OrganizationRepository {
  constructor(private readonly table: TableRef) {}

  /** The organization, its settings and its first admin key appear together or not at all. */
  async create(
    org: Organization,
    settings: OrganizationSettings,
    firstKey: ApiKeyRecord,
    tokenHash: string,
  ): Promise<void> {
    await this.table.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: this.table.tableName,
              Item: { ...keys.organization(org.organization_id), entity: 'organization', ...org },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          {
            Put: {
              TableName: this.table.tableName,
              Item: { ...keys.settings(org.organization_id), entity: 'settings', ...settings },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          ...apiKeyItems(this.table.tableName, firstKey, tokenHash),
          // The caps' counters start with the first key (shared/data/org-quota.ts).
          {
            Put: {
              TableName: this.table.tableName,
              Item: { ...keys.quotas(org.organization_id), entity: 'quotas', api_keys: 1, webhooks: 0 },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
        ],
      }),
    );
  }

  async get(orgId: string): Promise<Organization | undefined> {
    const out = await this.table.doc.send(
      new GetCommand({ TableName: this.table.tableName, Key: keys.organization(orgId) }),
    );
    return out.Item ? parseItem(organizationItem, out.Item, 'organization') : undefined;
  }

  async getSettings(orgId: string): Promise<OrganizationSettings | undefined> {
    const out = await this.table.doc.send(
      new GetCommand({ TableName: this.table.tableName, Key: keys.settings(orgId), ConsistentRead: true }),
    );
    return out.Item ? parseItem(settingsItem, out.Item, 'settings') : undefined;
  }

  async putSettings(orgId: string, settings: OrganizationSettings, expectedUpdatedAt: string): Promise<void> {
    const { updated_at, ...rest } = settings;
    const names: Record<string, string> = { '#updated_at': 'updated_at' };
    const values: Record<string, unknown> = { ':updated_at': updated_at, ':expected': expectedUpdatedAt };
    const sets = ['#updated_at = :updated_at'];
    for (const [k, v] of Object.entries(rest)) {
      if (v === undefined) continue; // an optional attribute the item never had stays absent
      names[`#${k}`] = k;
      values[`:${k}`] = v;
      sets.push(`#${k} = :${k}`);
    }
    // An organization with a bank link is in the sparse index the bank-link worker walks; without one, it is not.
    let remove = '';
    if (settings.bank_link) {
      sets.push('GSI2PK = :linked, GSI2SK = :org');
      values[':linked'] = keys.bankLinksIndex;
      values[':org'] = orgId;
    } else remove = ' REMOVE GSI2PK, GSI2SK';
    await this.table.doc.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: keys.settings(orgId),
        UpdateExpression: `SET ${sets.join(', ')}${remove}`,
        ConditionExpression: '#updated_at = :expected',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  }

  /** The organization's funding holds, oldest first (one per run whose debit came back). */
  async fundingHolds(orgId: string): Promise<FundingHold[]> {
    const out = await this.table.doc.send(
      new QueryCommand({
        TableName: this.table.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': keys.orgPartition(orgId), ':prefix': keys.fundingHoldPrefix },
        ConsistentRead: true,
      }),
    );
    return (out.Items ?? [])
      .map((item) => parseItem(fundingHoldItem, item, 'funding hold'))
      .sort((a, b) => a.since.localeCompare(b.since));
  }
}
