import * as z from 'zod';
import { DELIVERY_STATUSES, EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES } from '../domain/events.js';
import { limitParam, lookupId, pageTokenParam, text } from './common.js';

const events = z
  .array(z.enum(SUBSCRIBABLE_EVENT_TYPES))
  .min(1)
  .max(SUBSCRIBABLE_EVENT_TYPES.length)
  .refine((list) => new Set(list).size === list.length, {
    message: 'Event types must be unique',
    params: { code: 'duplicate_value' },
  });

const MAX_URL = 2048;
/** An http(s) URL of visible ASCII: a name punycoded, anything else percent-encoded, as a URI is written. */
const WEBHOOK_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://[!-~]+$';
const WEBHOOK_URL = new RegExp(WEBHOOK_URL_PATTERN);

/** The URL as it is stored and answered (normalized, the fragment dropped: shared/adapters/webhook-url.ts). */
function storedLength(value: string): number {
  try {
    const url = new URL(value);
    url.hash = '';
    return url.toString().length;
  } catch {
    return 0; // Not a URL: the use case refuses it as `unsafe_url`.
  }
}

/**
 * The endpoint's URL. Whether it may be called (https in production, public addresses) is checked when it is set,
 * by resolving it; here, its form, and its length once normalized, so what is answered fits the same bound.
 */
const webhookUrl = z
  .string()
  .min(1)
  .max(MAX_URL)
  .refine((v) => v === '' || WEBHOOK_URL.test(v), {
    message: 'Must be an http:// or https:// URL of visible ASCII characters (percent-encode the rest)',
    params: { code: 'unsafe_url' },
  })
  .refine((v) => storedLength(v) <= MAX_URL, {
    message: `At most ${MAX_URL} characters once normalized (percent-encoded)`,
    params: { code: 'unsafe_url' },
  })
  .meta({ format: 'uri', pattern: WEBHOOK_URL_PATTERN });

export const createWebhookBody = z.strictObject({
  url: webhookUrl,
  events: events.nullable().optional(),
  description: text(500).nullable().optional(),
});

/** `status` may be set to active (re-enabling a paused endpoint) or disabled; `unreliable` is set only by the service. */
export const updateWebhookBody = z.strictObject({
  url: webhookUrl.optional(),
  events: events.nullable().optional(),
  description: text(500).nullable().optional(),
  status: z.enum(['active', 'disabled']).optional(),
});

export const webhookIdParams = z.object({ id: lookupId });
export const listWebhooksQuery = z.strictObject({ limit: limitParam, page_token: pageTokenParam });

export const listEventsQuery = z.strictObject({
  type: z.enum(EVENT_TYPES).optional().meta({ description: 'Only events of this type' }),
  payroll_id: lookupId.optional().meta({ description: "Only this run's events" }),
  delivery_status: z
    .enum(DELIVERY_STATUSES)
    .optional()
    .meta({ description: 'Only events with a delivery in this status' }),
  limit: limitParam,
  page_token: pageTokenParam,
});
export const eventIdParams = z.object({ id: lookupId });
