import { MAX_DELIVERY_ATTEMPTS } from '../domain/events.js';
import { GSI2, TABLE_KEYS, TTL_ATTRIBUTE } from './keys.js';

/**
 * The single table's shape, read by the CDK stateful stack and by the local stack's provisioning, so the two
 * cannot drift. All key attributes are strings; the one index projects every attribute. A paystub is written to
 * the table and to this index only (the employee's list and year-to-date): two write units for an item up to 1 KB.
 */
export const TABLE_DEFINITION = {
  partitionKey: TABLE_KEYS.pk,
  sortKey: TABLE_KEYS.sk,
  ttlAttribute: TTL_ATTRIBUTE,
  globalSecondaryIndexes: [{ indexName: GSI2.name, partitionKey: GSI2.pk, sortKey: GSI2.sk }],
} as const;

/** Queues: each has a dead-letter queue that receives a message after `maxReceiveCount` failed receives. */
export const QUEUE_DEFINITIONS = {
  payroll: { name: 'payroll-processing', visibilityTimeoutSeconds: 900, maxReceiveCount: 5 },
  /** Three receives = the three delivery attempts; the handler sets each retry's delay; then the DLQ keeps it. */
  webhooks: { name: 'webhook-delivery', visibilityTimeoutSeconds: 60, maxReceiveCount: MAX_DELIVERY_ATTEMPTS },
} as const;
