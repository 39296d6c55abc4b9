import { Webhook } from 'standardwebhooks';
import { systemDeps, type Deps } from '../adapters/clock.js';
import type { TableRef } from '../adapters/dynamo.js';
import type { FieldEncryptor } from '../adapters/envelope-encryption.js';
import { logger } from '../adapters/logger.js';
import { METRIC_NAMES } from '../adapters/metric-names.js';
import { businessMetrics, traceCall } from '../adapters/observability.js';
import { Queue, sqsClient } from '../adapters/queue.js';
import { required } from '../config/env.js';
import { postWebhook, type Resolver } from '../adapters/webhook-url.js';
import { type DeliveryAttempt, type EventRecord, EventRepository, type NewEvent } from '../data/event-repository.js';
import type { PayrollRecord } from '../data/payroll-repository.js';
import { type WebhookRecord, WebhookRepository } from '../data/webhook-repository.js';
import { DomainError, NotFoundError, RateLimitedError } from '../domain/errors.js';
import {
  MAX_DELIVERY_ATTEMPTS,
  TEST_EVENT_INTERVAL_SECONDS,
  UNRELIABLE_AFTER_FAILED_EVENTS,
  type EventType,
} from '../domain/events.js';
import { payrollView } from './payroll-view.js';
import { signingSecrets } from './webhooks.js';

export interface EventServices {
  events: EventRepository;
  webhooks: WebhookRepository;
  webhookQueue: Queue;
  deps: Deps;
}

/**
 * What recording and fanning out events takes, over `table` and the webhook queue the environment names: built once
 * at module scope by each function that dispatches events (the payroll and webhook routes, the workers).
 */
export function eventServicesOver(table: TableRef): EventServices {
  return {
    events: new EventRepository(table),
    webhooks: new WebhookRepository(table),
    webhookQueue: new Queue(sqsClient(), required('WEBHOOK_QUEUE_URL')),
    deps: systemDeps,
  };
}

export interface DeliveryServices extends EventServices {
  encryptor: FieldEncryptor;
  environment: 'sandbox' | 'production';
  /** Seconds before the 2nd and 3rd attempts. */
  retryDelaysSeconds: readonly number[];
  resolve?: Resolver;
  timeoutMs?: number;
}

/** What a delivery message names: one event, one endpoint. */
export interface DeliveryMessage {
  organization_id: string;
  event_id: string;
  webhook_id: string;
}

/** The body receivers get, signed as is. */
export function eventPayload(e: Pick<EventRecord, 'event_id' | 'type' | 'created_at' | 'data'>) {
  return { id: e.event_id, type: e.type, timestamp: e.created_at, data: e.data };
}

/** A payroll event: the run as it stands after the change, plus what the event adds (reason, findings…). */
export function payrollEvent(
  deps: Deps,
  r: PayrollRecord,
  type: EventType,
  extra: Record<string, unknown> = {},
): NewEvent {
  const { progress: _progress, created_at: _created, updated_at: _updated, ...summary } = payrollView.summary(r);
  return {
    event_id: deps.newId('evt'),
    organization_id: r.organization_id,
    type,
    payroll_id: r.payroll_id,
    data: { ...summary, ...extra },
    created_at: deps.now().toISOString(),
  };
}

function subscribed(events: readonly EventType[] | null, type: EventType): boolean {
  return events === null || events.includes(type);
}

/**
 * Fans recorded events out to the organization's active endpoints: one delivery item and one queue message per
 * event and endpoint, then the event leaves the outbox. At least once: a crash before the marker is cleared
 * makes the sweeper fan it out again, and receivers de-duplicate on the stable `webhook-id` (the event id). The
 * repeat sends a message only for deliveries still open: one already closed is never re-opened (and re-sent) by it.
 */
export async function dispatchEvents(
  s: EventServices,
  events: readonly Pick<EventRecord, 'organization_id' | 'event_id' | 'type'>[],
): Promise<void> {
  const endpointsByOrg = new Map<string, Awaited<ReturnType<WebhookRepository['all']>>>();
  for (const e of events) {
    let endpoints = endpointsByOrg.get(e.organization_id);
    if (!endpoints) {
      endpoints = await s.webhooks.all(e.organization_id);
      endpointsByOrg.set(e.organization_id, endpoints);
    }
    const targets = endpoints.filter((w) => w.status === 'active' && subscribed(w.events, e.type));
    const at = s.deps.now().toISOString();
    const open: WebhookRecord[] = [];
    for (const w of targets) if (await s.events.openDelivery(e, w, at)) open.push(w);
    await s.webhookQueue.sendAll(
      open.map(
        (w): DeliveryMessage => ({
          organization_id: e.organization_id,
          event_id: e.event_id,
          webhook_id: w.webhook_id,
        }),
      ),
    );
    await s.events.markDispatched(e.organization_id, e.event_id);
  }
}

/** After the state change has committed: a failure here only delays delivery (the sweeper picks the events up). */
export async function dispatchQuietly(s: EventServices, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  try {
    await dispatchEvents(s, events);
  } catch (err) {
    logger.warn('event fan-out deferred to the sweeper', {
      events: events.map((e) => e.event_id),
      error: err as Error,
    });
  }
}

export async function resumeUndispatchedEvents(s: EventServices, staleBefore: Date): Promise<number> {
  const events = await s.events.listUndispatched(staleBefore.toISOString(), 500);
  await dispatchEvents(s, events);
  return events.length;
}

/** Re-sends of one pending delivery before the sweeper gives up on it and closes it `failed`. */
export const MAX_DELIVERY_SWEEPS = 3;

/**
 * How long a delivery may stay pending with no activity before the sweeper re-sends it: longer than the longest
 * retry delay the deliverer sets, plus a worker's timeout and margin, so a delivery waiting for its next attempt
 * is never re-sent.
 */
export const pendingDeliveryStaleMs = (retryDelaysSeconds: readonly number[]) =>
  (Math.max(0, ...retryDelaysSeconds) + 15 * 60) * 1000;

/**
 * Deliveries still pending long after their last activity lost their message: a worker killed outright (not by an
 * exception) on its last receive leaves the delivery open while SQS dead-letters the message, and the local
 * stack's in-memory queue loses messages across a restart. Each is sent again, with its stable `webhook-id`; one
 * that no worker finishes after MAX_DELIVERY_SWEEPS re-sends (its endpoint disabled since, say) is closed `failed`
 * with the reason, rather than re-sent forever. The sweep is recorded before the message is sent, so a crash
 * between the two costs one sweep and is picked up by the next.
 */
export async function resumePendingDeliveries(
  s: EventServices,
  staleBefore: Date,
  now: Date,
): Promise<{ resent: number; abandoned: number }> {
  const stale = await s.events.listStalePendingDeliveries(staleBefore.toISOString(), 500);
  const resend: DeliveryMessage[] = [];
  let abandoned = 0;
  for (const d of stale) {
    if (d.sweeps >= MAX_DELIVERY_SWEEPS) {
      const attempt: DeliveryAttempt = {
        at: now.toISOString(),
        status_code: null,
        latency_ms: 0,
        error: `abandoned: no delivery attempt finished after ${MAX_DELIVERY_SWEEPS} re-sends`,
      };
      if (await s.events.recordAttempt(d.organization_id, d.event_id, d.webhook_id, attempt, 'failed')) {
        abandoned++;
        businessMetrics.count(METRIC_NAMES.webhookDeliveriesFailed);
      }
      continue;
    }
    if (await s.events.markSwept(d.organization_id, d.event_id, d.webhook_id, now.toISOString())) {
      resend.push({ organization_id: d.organization_id, event_id: d.event_id, webhook_id: d.webhook_id });
    }
  }
  await s.webhookQueue.sendAll(resend);
  return { resent: resend.length, abandoned };
}

export type DeliveryOutcome = { kind: 'done' } | { kind: 'retry'; delaySeconds: number } | { kind: 'failed' };

/** The wait before the next attempt, after the `attempt`-th (1-based). */
export const retryDelay = (delaysSeconds: readonly number[], attempt: number): number =>
  delaysSeconds[attempt - 1] ?? delaysSeconds.at(-1) ?? 30;

/**
 * One attempt to deliver one event to one endpoint, signed per the Standard Webhooks specification. Attempts are
 * counted in the delivery record (`attempt_count`), one per POST actually made: a receive of the message that
 * faults before its POST (a throttled read, a crash, a KMS error), or a Lambda throttle that never ran the handler,
 * spends no attempt, only one of the queue's receives (QUEUE_DEFINITIONS.webhooks leaves room for those). After
 * the 1st and 2nd failed POST the outcome asks for a retry after the configured delay; the 3rd failure closes the
 * delivery `failed`, and the message is then done with (acknowledged, never delivered again).
 *
 * A message whose delivery is closed (a duplicate, a redriven message, one left after its twin finished) is
 * acknowledged without a POST. A failure is recorded only on the attempt count it was made on, so two messages of
 * one delivery (a sweeper's re-send, a redelivery) never spend one attempt twice: the one that loses that race is
 * acknowledged, and the other carries the delivery on. A worker dying after its POST and before its record leaves the
 * attempt uncounted: the message comes back and POSTs again (at least once; receivers de-duplicate on the id).
 */
export async function deliverEvent(s: DeliveryServices, m: DeliveryMessage): Promise<DeliveryOutcome> {
  const [webhook, delivery, event] = await Promise.all([
    s.webhooks.get(m.organization_id, m.webhook_id),
    s.events.getDelivery(m.organization_id, m.event_id, m.webhook_id),
    s.events.get(m.organization_id, m.event_id),
  ]);
  // A failed delivery whose endpoint should have been paused with it: the worker that closed it died in between.
  if (
    delivery?.status === 'failed' &&
    webhook?.status === 'active' &&
    webhook.consecutive_failures >= UNRELIABLE_AFTER_FAILED_EVENTS
  )
    await pauseIfUnreliable(s, m);
  // A closed delivery (a duplicate message), a deleted event, or an endpoint removed or disabled since: nothing to send.
  if (!webhook || !delivery || !event || delivery.status !== 'pending' || webhook.status === 'disabled')
    return { kind: 'done' };
  const made = delivery.attempt_count ?? 0;
  const now = s.deps.now();
  const payload = JSON.stringify(eventPayload(event));
  const signatures = (await signingSecrets(s, webhook, now)).map((secret) =>
    new Webhook(secret).sign(event.event_id, now, payload),
  );
  const result = await traceCall('webhook POST', () =>
    postWebhook(
      webhook.url,
      payload,
      {
        'webhook-id': event.event_id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signatures.join(' '),
      },
      { environment: s.environment, timeoutMs: s.timeoutMs ?? 10_000, resolve: s.resolve },
    ),
  );
  const attempt: DeliveryAttempt = {
    at: now.toISOString(),
    status_code: result.status,
    latency_ms: Math.round(result.latencyMs),
    error: result.error,
  };
  if (result.ok) {
    await closeDelivery(s, m, webhook, attempt, 'succeeded', made);
    return { kind: 'done' };
  }
  const number = made + 1;
  if (number < MAX_DELIVERY_ATTEMPTS) {
    // Not recorded: another message of this delivery counted an attempt first (or closed it), and carries it on.
    if (!(await s.events.recordAttempt(m.organization_id, m.event_id, m.webhook_id, attempt, null, [], made)))
      return { kind: 'done' };
    return { kind: 'retry', delaySeconds: retryDelay(s.retryDelaysSeconds, number) };
  }
  return (await closeDelivery(s, m, webhook, attempt, 'failed', made)) ? { kind: 'failed' } : { kind: 'done' };
}

/**
 * Closes a delivery, counting its last attempt (`counted`: the attempt count read before it) and moving the
 * endpoint's failure count in the same transaction (a success writes the endpoint only if it has failures to reset,
 * so deliveries to a healthy endpoint do not contend on its item), then pauses an endpoint that has failed too often.
 * Both parts are idempotent: running them again after a crash changes nothing. False when it did not close it (closed
 * already, or a failure recorded on an attempt count another message moved first).
 */
async function closeDelivery(
  s: DeliveryServices,
  m: DeliveryMessage,
  webhook: WebhookRecord,
  attempt: DeliveryAttempt,
  outcome: 'succeeded' | 'failed',
  counted: number,
): Promise<boolean> {
  const endpoint =
    outcome === 'failed' || webhook.consecutive_failures !== 0
      ? s.webhooks.outcomeItems(m.organization_id, m.webhook_id, outcome, attempt.at)
      : [];
  const closed = await s.events.recordAttempt(
    m.organization_id,
    m.event_id,
    m.webhook_id,
    attempt,
    outcome,
    endpoint,
    counted,
  );
  if (closed && outcome === 'failed') businessMetrics.count(METRIC_NAMES.webhookDeliveriesFailed);
  if (outcome === 'failed') await pauseIfUnreliable(s, m);
  return closed;
}

async function pauseIfUnreliable(s: DeliveryServices, m: DeliveryMessage): Promise<void> {
  if (await s.webhooks.pauseIfUnreliable(m.organization_id, m.webhook_id)) {
    logger.warn('webhook endpoint marked unreliable and paused', {
      webhook_id: m.webhook_id,
      organization_id: m.organization_id,
    });
  }
}

/**
 * Sends an event again: to every endpoint it was delivered to (whatever the outcome), or, if it never had one, to
 * the endpoints subscribed now. The `webhook-id` stays the event id, so receivers recognise a repeat.
 */
/** CONTRACT §3: at most one redelivery of an event per minute. */
export const REDELIVERY_INTERVAL_SECONDS = 60;

export async function redeliverEvent(s: EventServices, orgId: string, eventId: string): Promise<EventRecord> {
  const event = await s.events.get(orgId, eventId);
  if (!event) throw new NotFoundError();
  // One redelivery per event per minute: a replay button, not a way to point POSTs at someone else's server.
  const wait = await s.events.claimRedelivery(orgId, eventId, s.deps.now(), REDELIVERY_INTERVAL_SECONDS);
  if (wait > 0) throw new RateLimitedError(wait);
  const endpoints = (await s.webhooks.all(orgId)).filter((w) => w.status !== 'disabled');
  const previous = new Set(Object.keys(event.deliveries));
  // A test event only ever goes to the endpoint it names, even one left without its delivery by a crash.
  const named = event.type === 'webhook.test' ? event.data.webhook_id : undefined;
  const targets =
    previous.size > 0
      ? endpoints.filter((w) => previous.has(w.webhook_id))
      : event.type === 'webhook.test'
        ? endpoints.filter((w) => w.webhook_id === named)
        : endpoints.filter((w) => subscribed(w.events, event.type));
  const at = s.deps.now().toISOString();
  for (const w of targets) await s.events.openDelivery(event, w, at, { reopen: true });
  await s.webhookQueue.sendAll(
    targets.map((w): DeliveryMessage => ({ organization_id: orgId, event_id: eventId, webhook_id: w.webhook_id })),
  );
  return (await s.events.get(orgId, eventId))!;
}

/** A disabled endpoint gets nothing, test events included: enable it first. */
export class WebhookDisabledError extends DomainError {
  constructor() {
    // `conflict`, the documented 409 code; the detail names the reason.
    super('conflict', 'conflict', 'The webhook endpoint is disabled', [
      {
        field: 'status',
        code: 'webhook_disabled',
        message: 'A disabled endpoint receives nothing, test events included: set its status to active first',
      },
    ]);
  }
}

/**
 * Records a `webhook.test` event naming the endpoint and delivers it to that endpoint alone, whatever its `events`
 * list, through the normal delivery path: signed, retried, its attempts in the event log, redeliverable. At most one
 * per endpoint address per minute (`429` with the wait otherwise), however many endpoints name it. An
 * endpoint paused as `unreliable` gets it (the way to check a receiver is fixed before re-enabling it); a
 * `disabled` one does not (`409 conflict`, detail `webhook_disabled`): the deliverer sends nothing to a disabled
 * endpoint. The event is written with its delivery open and outside the outbox, so the sweeper never fans it out to
 * the other endpoints (it only re-sends the pending delivery, to this endpoint).
 */
export async function sendTestEvent(s: EventServices, orgId: string, webhookId: string): Promise<EventRecord> {
  const webhook = await s.webhooks.get(orgId, webhookId);
  if (!webhook) throw new NotFoundError();
  if (webhook.status === 'disabled') throw new WebhookDisabledError();
  const wait = await s.webhooks.claimTestEvent(orgId, webhook.url, s.deps.now(), TEST_EVENT_INTERVAL_SECONDS);
  if (wait > 0) throw new RateLimitedError(wait);
  const at = s.deps.now().toISOString();
  const event: NewEvent = {
    event_id: s.deps.newId('evt'),
    organization_id: orgId,
    type: 'webhook.test',
    payroll_id: null,
    data: {
      test: true,
      webhook_id: webhook.webhook_id,
      url: webhook.url,
      message: 'A test event sent on request from the API or the dashboard: no payroll changed',
    },
    created_at: at,
  };
  // The event and its one delivery in one write, never in the outbox: nothing fans it out to other endpoints.
  await s.events.putWithDelivery(event, webhook);
  // A lost message leaves the delivery pending: the sweeper sends it again, to this endpoint.
  await s.webhookQueue.sendAll([{ organization_id: orgId, event_id: event.event_id, webhook_id: webhookId }]);
  return (await s.events.get(orgId, event.event_id))!;
}

export async function eventView(s: Pick<EventServices, 'events'>, e: EventRecord) {
  const deliveries = await s.events.deliveries(e.organization_id, e.event_id);
  return {
    ...eventPayload(e),
    payroll_id: e.payroll_id,
    deliveries: deliveries.map((d) => ({
      webhook_id: d.webhook_id,
      url: d.url,
      status: d.status,
      attempts: d.attempts,
    })),
  };
}
