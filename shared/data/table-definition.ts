import { MAX_DELIVERY_ATTEMPTS } from '../domain/events.js';
import { GSI1, GSI2, GSI3, TABLE_KEYS, TTL_ATTRIBUTE } from './keys.js';

/**
 * The single table's shape, read by the CDK stateful stack and by the local stack's provisioning, so the two
 * cannot drift. All key attributes are strings; both indexes project every attribute.
 */
export const TABLE_DEFINITION = {
  partitionKey: TABLE_KEYS.pk,
  sortKey: TABLE_KEYS.sk,
  ttlAttribute: TTL_ATTRIBUTE,
  globalSecondaryIndexes: [
    { indexName: GSI1.name, partitionKey: GSI1.pk, sortKey: GSI1.sk },
    { indexName: GSI2.name, partitionKey: GSI2.pk, sortKey: GSI2.sk },
    { indexName: GSI3.name, partitionKey: GSI3.pk, sortKey: GSI3.sk },
  ],
} as const;

/** Queues: each has a dead-letter queue that receives a message after `maxReceiveCount` failed receives. */
export const QUEUE_DEFINITIONS = {
  payroll: { name: 'payroll-processing', visibilityTimeoutSeconds: 900, maxReceiveCount: 5 },
  /** Three receives = the three delivery attempts; the handler sets each retry's delay; then the DLQ keeps it. */
  webhooks: { name: 'webhook-delivery', visibilityTimeoutSeconds: 60, maxReceiveCount: MAX_DELIVERY_ATTEMPTS },
} as const;
