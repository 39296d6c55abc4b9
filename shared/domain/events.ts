/**
 * Every event the service emits; a webhook endpoint subscribes to all of them or to a list. `webhook.test` is sent
 * only on request (`POST /v1/webhooks/{id}/test`), to the one endpoint named, whatever its list.
 */
export const EVENT_TYPES = [
  'payroll.submitted',
  'payroll.processing',
  'payroll.approved',
  'payroll.rejected',
  'payroll.processed',
  'payroll.completed',
  'payroll.failed',
  'payroll.cancelled',
  'paystub.generated',
  'payment.returned',
  'payroll.funding_returned',
  'payment.reversed',
  'payment.reversal_returned',
  'disbursement_file.late',
  'employee.bank_account_corrected',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What an endpoint may subscribe to: every type but `webhook.test`, which only goes where it is sent. */
export const SUBSCRIBABLE_EVENT_TYPES = EVENT_TYPES.filter(
  (t): t is Exclude<EventType, 'webhook.test'> => t !== 'webhook.test',
) as [Exclude<EventType, 'webhook.test'>, ...Exclude<EventType, 'webhook.test'>[]];

export const WEBHOOK_STATUSES = ['active', 'unreliable', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/** Deliveries of one event to one endpoint: three attempts, then `failed` (kept, and redeliverable). */
export const MAX_DELIVERY_ATTEMPTS = 3;
/** Consecutive events whose delivery failed before an endpoint is marked unreliable and paused. */
export const UNRELIABLE_AFTER_FAILED_EVENTS = 5;
/** How long a rotated-out secret still signs deliveries, so receivers can roll over without dropping events. */
export const SECRET_ROTATION_GRACE_MS = 24 * 3600 * 1000;

/** At most one test event per endpoint address per this many seconds, as redeliveries of an event. */
export const TEST_EVENT_INTERVAL_SECONDS = 60;

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
