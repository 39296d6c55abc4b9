import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { TableRef } from '../adapters/dynamo.js';
import { DELIVERY_STATUSES, EVENT_TYPES, type DeliveryStatus, type EventType } from '../domain/events.js';
import { queryFilter } from './filters.js';
import { cancelledConditions, isConditionalCheckFailure, parseItem, type TransactItems } from './item.js';
import { GSI2, keys } from './keys.js';
import { queryPage, type Page } from './paginate.js';

const eventItem = z.object({
  event_id: z.string(),
  organization_id: z.string(),
  type: z.enum(EVENT_TYPES),
  payroll_id: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  /** Status of the delivery to each endpoint; the two sets make "which events have a failed delivery" a filter. */
  deliveries: z.record(z.string(), z.enum(DELIVERY_STATUSES)),
  pending_endpoints: z.set(z.string()).optional(),
  failed_endpoints: z.set(z.string()).optional(),
});
export type EventRecord = z.infer<typeof eventItem>;

const attempt = z.object({
  at: z.string(),
  status_code: z.number().int().nullable(),
  latency_ms: z.number().int(),
  error: z.string().nullable(),
});
export type DeliveryAttempt = z.infer<typeof attempt>;

const deliveryItem = z.object({
  event_id: z.string(),
  webhook_id: z.string(),
  organization_id: z.string(),
  url: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.array(attempt),
  created_at: z.string(),
  updated_at: z.string(),
  /** How often the sweeper has re-sent it since its message was lost (pending deliveries only). */
  sweeps: z.number().int().optional(),
  /**
   * POSTs made to the endpoint since the delivery was opened (or re-opened by a redelivery): the attempt count its
   * retries go by. `attempts` keeps every attempt ever made, across redeliveries. Absent on a delivery opened before
   * attempts were counted here: none counted yet.
   */
  attempt_count: z.number().int().optional(),
});
export type DeliveryRecord = z.infer<typeof deliveryItem>;

const parseEvent = (item: Record<string, unknown>) => parseItem(eventItem, item, 'event');
/** The pending marker's sort key: the delivery's last activity first, so the sweeper's key range is "idle since". */
const pendingSince = (at: string, org: string, eventId: string, webhookId: string) =>
  `${at}#${org}#${eventId}#${webhookId}`;
const parseDelivery = (item: Record<string, unknown>) => parseItem(deliveryItem, item, 'delivery');

export interface NewEvent {
  event_id: string;
  organization_id: string;
  type: EventType;
  payroll_id: string | null;
  data: Record<string, unknown>;
  created_at: string;
}

export class EventRepository {
  constructor(private readonly table: TableRef) {}

  /**
   * The outbox: event items to add to the same transaction as the state change they describe, so a change is
   * never without its event. Each carries the sparse UNDISPATCHED marker until it has been fanned out.
   */
  items(events: readonly NewEvent[]): TransactItems {
    return events.map((e) => ({
      Put: {
        TableName: this.table.tableName,
        Item: {
          ...keys.event(e.organization_id, e.event_id),
          entity: 'event',
          ...e,
          deliveries: {},
          GSI2PK: keys.undispatchedEventsIndex,
          GSI2SK: `${e.created_at}#${e.event_id}`,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    }));
  }

  /**
   * An event recorded with its one delivery already open, in one transaction (a test event, for the endpoint it
   * names): never in the outbox, so the sweeper never fans it out to the subscribed endpoints, and never without its
   * delivery, so it cannot be left undelivered by a crash. Its delivery is pending, as `openDelivery` leaves one.
   */
  async putWithDelivery(e: NewEvent, webhook: { webhook_id: string; url: string }): Promise<void> {
    await this.table.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: this.table.tableName,
              Item: {
                ...keys.event(e.organization_id, e.event_id),
                entity: 'event',
                ...e,
                deliveries: { [webhook.webhook_id]: 'pending' },
                pending_endpoints: new Set([webhook.webhook_id]),
              },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          { Update: this.deliveryUpdate(e, webhook, e.created_at, false) },
        ],
      }),
    );
  }

  async get(orgId: string, eventId: string): Promise<EventRecord | undefined> {
    const out = await this.table.doc.send(
      new GetCommand({ TableName: this.table.tableName, Key: keys.event(orgId, eventId), ConsistentRead: true }),
    );
    return out.Item && out.Item.entity === 'event' ? parseEvent(out.Item) : undefined;
  }

  /**
   * Claims the event's one redelivery of the minute (CONTRACT §3): 0 when claimed, otherwise the seconds until the
   * next one may be. One conditional write, so two concurrent requests cannot both claim it.
   */
  async claimRedelivery(orgId: string, eventId: string, now: Date, everySeconds: number): Promise<number> {
    const at = now.toISOString();
    const earliest = new Date(now.getTime() - everySeconds * 1000).toISOString();
    try {
      await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.event(orgId, eventId),
          UpdateExpression: 'SET last_redelivery_at = :at',
          ConditionExpression:
            'entity = :event AND (attribute_not_exists(last_redelivery_at) OR last_redelivery_at <= :earliest)',
          ExpressionAttributeValues: { ':at': at, ':earliest': earliest, ':event': 'event' },
          // The refusal carries the item, so the wait needs no second read.
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 0;
    } catch (err) {
      if (!isConditionalCheckFailure(err)) throw err;
      // The old item comes back in the wire format ({ S: "…" }), as in the rate-limit repository.
      const old = (err as { Item?: Record<string, unknown> }).Item?.last_redelivery_at as
        | { S?: string }
        | string
        | undefined;
      const last = typeof old === 'object' ? old.S : old;
      if (last === undefined) return everySeconds;
      // A racing request's claim may be stamped a moment after this request's `now`: never more than the interval.
      const wait = Math.ceil((Date.parse(last) + everySeconds * 1000 - now.getTime()) / 1000);
      return Math.min(everySeconds, Math.max(1, wait));
    }
  }

  async deliveries(orgId: string, eventId: string): Promise<DeliveryRecord[]> {
    const out = await this.table.doc.send(
      new QueryCommand({
        TableName: this.table.tableName,
        ConsistentRead: true,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: {
          ':pk': keys.orgPartition(orgId),
          ':prefix': `${keys.event(orgId, eventId).SK}#DELIVERY#`,
        },
      }),
    );
    return (out.Items ?? []).map(parseDelivery);
  }

  async getDelivery(orgId: string, eventId: string, webhookId: string): Promise<DeliveryRecord | undefined> {
    const out = await this.table.doc.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.delivery(orgId, eventId, webhookId),
        ConsistentRead: true,
      }),
    );
    return out.Item ? parseDelivery(out.Item) : undefined;
  }

  /** Newest first; filters on type, payroll and delivery status. */
  async list(
    orgId: string,
    f: { type?: EventType; payrollId?: string; deliveryStatus?: DeliveryStatus },
    limit: number,
    startKey?: Record<string, unknown>,
  ): Promise<Page<EventRecord>> {
    return queryPage(
      this.table,
      {
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ...queryFilter({ ':pk': keys.orgPartition(orgId), ':prefix': keys.eventPrefix }, [
          { expression: 'entity = :event', values: { ':event': 'event' } },
          f.type && { expression: '#type = :type', names: { '#type': 'type' }, values: { ':type': f.type } },
          f.payrollId && { expression: 'payroll_id = :payroll', values: { ':payroll': f.payrollId } },
          f.deliveryStatus === 'pending' && { expression: 'attribute_exists(pending_endpoints)' },
          f.deliveryStatus === 'failed' && { expression: 'attribute_exists(failed_endpoints)' },
          f.deliveryStatus === 'succeeded' && {
            expression:
              'size(deliveries) > :zero AND attribute_not_exists(pending_endpoints) AND attribute_not_exists(failed_endpoints)',
            values: { ':zero': 0 },
          },
        ]),
        ScanIndexForward: false,
        ConsistentRead: true,
      },
      limit,
      startKey,
      parseEvent,
    );
  }

  async listUndispatched(before: string, limit: number): Promise<EventRecord[]> {
    const page = await queryPage(
      this.table,
      {
        IndexName: GSI2.name,
        KeyConditionExpression: 'GSI2PK = :pk AND GSI2SK < :before',
        ExpressionAttributeValues: { ':pk': keys.undispatchedEventsIndex, ':before': before },
      },
      limit,
      undefined,
      parseEvent,
    );
    return page.items;
  }

  /** Deliveries still pending with no activity since `before`, oldest first: what the sweeper re-sends. */
  async listStalePendingDeliveries(
    before: string,
    limit: number,
  ): Promise<{ organization_id: string; event_id: string; webhook_id: string; sweeps: number }[]> {
    const page = await queryPage(
      this.table,
      {
        IndexName: GSI2.name,
        KeyConditionExpression: 'GSI2PK = :pk AND GSI2SK < :before',
        ExpressionAttributeValues: { ':pk': keys.pendingDeliveriesIndex, ':before': before },
      },
      limit,
      undefined,
      parseDelivery,
    );
    return page.items.map((d) => ({
      organization_id: d.organization_id,
      event_id: d.event_id,
      webhook_id: d.webhook_id,
      sweeps: d.sweeps ?? 0,
    }));
  }

  /**
   * Records that the sweeper re-sent a pending delivery: one more sweep, and the marker's time moved to `at`, so
   * the next sweep waits as long again. False when the delivery closed meanwhile.
   */
  async markSwept(orgId: string, eventId: string, webhookId: string, at: string): Promise<boolean> {
    try {
      await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.tableName,
          Key: keys.delivery(orgId, eventId, webhookId),
          UpdateExpression: 'SET GSI2SK = :since ADD sweeps :one',
          ConditionExpression: '#status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':since': pendingSince(at, orgId, eventId, webhookId),
            ':one': 1,
            ':pending': 'pending',
          },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionalCheckFailure(err)) return false;
      throw err;
    }
  }

  async markDispatched(orgId: string, eventId: string): Promise<void> {
    await this.table.doc.send(
      new UpdateCommand({
        TableName: this.table.tableName,
        Key: keys.event(orgId, eventId),
        UpdateExpression: 'REMOVE GSI2PK, GSI2SK',
      }),
    );
  }

  /**
   * The delivery item's side of opening a delivery: pending, past attempts kept, on the sweeper's pending index.
   * Without `reopen`, only a delivery not yet closed; with it, any, and with a fresh count of attempts.
   */
  private deliveryUpdate(
    event: Pick<EventRecord, 'organization_id' | 'event_id'>,
    webhook: { webhook_id: string; url: string },
    at: string,
    reopen: boolean,
  ) {
    const org = event.organization_id;
    return {
      TableName: this.table.tableName,
      Key: keys.delivery(org, event.event_id, webhook.webhook_id),
      UpdateExpression: `SET entity = :entity, event_id = :event, webhook_id = :webhook, organization_id = :org, #url = :url, #status = :pending, attempts = if_not_exists(attempts, :none), attempt_count = ${reopen ? ':zero' : 'if_not_exists(attempt_count, :zero)'}, created_at = if_not_exists(created_at, :at), updated_at = :at, GSI2PK = :marker, GSI2SK = :since REMOVE sweeps`,
      ...(!reopen && { ConditionExpression: 'attribute_not_exists(#status) OR #status = :pending' }),
      ExpressionAttributeNames: { '#url': 'url', '#status': 'status' },
      ExpressionAttributeValues: {
        ':entity': 'delivery',
        ':event': event.event_id,
        ':webhook': webhook.webhook_id,
        ':org': org,
        ':url': webhook.url,
        ':pending': 'pending',
        ':none': [],
        ':zero': 0,
        ':at': at,
        ':marker': keys.pendingDeliveriesIndex,
        ':since': pendingSince(at, org, event.event_id, webhook.webhook_id),
      },
    };
  }

  /**
   * Opens the delivery of an event to an endpoint: the delivery item is pending and the event lists the endpoint as
   * pending, in one transaction. Past attempts are kept. A fan-out never re-opens a closed delivery (a sweeper
   * repeating a fan-out interrupted after its messages went out must not send a delivered event again): it returns
   * false and sends nothing, and leaves the attempt count of one still pending as it is. `reopen` is for an explicit
   * redelivery, which re-opens whatever the outcome, with a fresh count of attempts.
   */
  async openDelivery(
    event: Pick<EventRecord, 'organization_id' | 'event_id'>,
    webhook: { webhook_id: string; url: string },
    at: string,
    options: { reopen?: boolean } = {},
  ): Promise<boolean> {
    const t = this.table.tableName;
    const org = event.organization_id;
    try {
      await this.table.doc.send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: this.deliveryUpdate(event, webhook, at, options.reopen ?? false) },
            {
              Update: {
                TableName: t,
                Key: keys.event(org, event.event_id),
                UpdateExpression:
                  'SET deliveries.#w = :pending ADD pending_endpoints :set DELETE failed_endpoints :set',
                ConditionExpression: 'attribute_exists(PK)',
                ExpressionAttributeNames: { '#w': webhook.webhook_id },
                ExpressionAttributeValues: { ':pending': 'pending', ':set': new Set([webhook.webhook_id]) },
              },
            },
          ],
        }),
      );
      return true;
    } catch (err) {
      if (!options.reopen && cancelledConditions(err)?.[0]) return false;
      throw err;
    }
  }

  /**
   * Appends an attempt to the delivery and, when `outcome` is final, closes it: the delivery, the event's view of it
   * and `alsoWrite` (the endpoint's failure count) move together. A final outcome only applies to a delivery still
   * pending (a re-delivered message whose delivery was already closed changes nothing); returns false then.
   *
   * `counted`, for an attempt that POSTed to the endpoint: the delivery's `attempt_count` read before the POST. The
   * attempt is counted (one more), and a failure is recorded only if no other attempt was counted since (a twin
   * message of the same delivery, a redelivery's fresh count): false otherwise, and nothing is written, so two
   * messages never spend the same attempt twice. A success closes the delivery whatever the count. Without
   * `counted` (the sweeper giving up on a delivery) nothing is counted.
   */
  async recordAttempt(
    orgId: string,
    eventId: string,
    webhookId: string,
    a: DeliveryAttempt,
    outcome: 'succeeded' | 'failed' | null,
    alsoWrite: TransactItems = [],
    counted?: number,
  ): Promise<boolean> {
    const t = this.table.tableName;
    const counts = counted !== undefined;
    const checksCount = counts && outcome !== 'succeeded';
    const sameCount =
      counted === 0 ? '(attribute_not_exists(attempt_count) OR attempt_count = :seen)' : 'attempt_count = :seen';
    const items: TransactItems = [
      {
        Update: {
          TableName: t,
          Key: keys.delivery(orgId, eventId, webhookId),
          // Closing removes the pending marker; an attempt that leaves it pending moves the marker's time forward.
          UpdateExpression: [
            outcome
              ? 'SET attempts = list_append(attempts, :a), #status = :outcome, updated_at = :at'
              : 'SET attempts = list_append(attempts, :a), updated_at = :at, GSI2SK = :since',
            counts ? ', attempt_count = if_not_exists(attempt_count, :zero) + :one' : '',
            outcome ? ' REMOVE GSI2PK, GSI2SK' : '',
          ].join(''),
          ConditionExpression: checksCount ? `#status = :pending AND ${sameCount}` : '#status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':a': [a],
            ':at': a.at,
            ':pending': 'pending',
            ...(outcome ? { ':outcome': outcome } : { ':since': pendingSince(a.at, orgId, eventId, webhookId) }),
            ...(counts && { ':zero': 0, ':one': 1 }),
            ...(checksCount && { ':seen': counted }),
          },
        },
      },
    ];
    if (outcome) {
      items.push(
        {
          Update: {
            TableName: t,
            Key: keys.event(orgId, eventId),
            UpdateExpression:
              outcome === 'failed'
                ? 'SET deliveries.#w = :outcome DELETE pending_endpoints :set ADD failed_endpoints :set'
                : 'SET deliveries.#w = :outcome DELETE pending_endpoints :set',
            ExpressionAttributeNames: { '#w': webhookId },
            ExpressionAttributeValues: { ':outcome': outcome, ':set': new Set([webhookId]) },
          },
        },
        ...alsoWrite,
      );
    }
    // A transaction lost to a concurrent one is retried by the client itself (createDocumentClient).
    try {
      await this.table.doc.send(new TransactWriteCommand({ TransactItems: items }));
      return true;
    } catch (err) {
      const failed = cancelledConditions(err);
      if (failed?.[0]) return false;
      // The endpoint was deleted meanwhile: the delivery still closes, without the endpoint's bookkeeping.
      if (failed?.slice(2).some(Boolean)) return this.recordAttempt(orgId, eventId, webhookId, a, outcome, [], counted);
      throw err;
    }
  }
}
