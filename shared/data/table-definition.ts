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
  /**
   * The three delivery attempts are counted in the delivery record, not by receives (deliverEvent), so a receive
   * that makes no POST (a Lambda throttle, a fault before the POST) spends none: 10 receives are the 3 attempts and 7
   * such receives (AWS advises at least 5 for a Lambda event source). A message that outlives them all, about 40
   * minutes of faults at the retry delays, is in real trouble: the DLQ and its alarm get it, the sweeper re-sends
   * its delivery. A delivery closed (failed after three POSTs, or succeeded) acknowledges its message.
   */
  webhooks: { name: 'webhook-delivery', visibilityTimeoutSeconds: 60, maxReceiveCount: 10 },
} as const;
