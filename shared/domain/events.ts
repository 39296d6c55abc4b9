/** Every event the service emits; a webhook endpoint subscribes to all of them or to a list. */
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
  'employee.bank_account_corrected',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const WEBHOOK_STATUSES = ['active', 'unreliable', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/** Deliveries of one event to one endpoint: three attempts, then `failed` (kept, and redeliverable). */
export const MAX_DELIVERY_ATTEMPTS = 3;
/** Consecutive events whose delivery failed before an endpoint is marked unreliable and paused. */
export const UNRELIABLE_AFTER_FAILED_EVENTS = 5;
/** How long a rotated-out secret still signs deliveries, so receivers can roll over without dropping events. */
export const SECRET_ROTATION_GRACE_MS = 24 * 3600 * 1000;

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
