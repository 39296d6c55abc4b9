import * as z from 'zod';
import { DELIVERY_STATUSES, EVENT_TYPES } from '../domain/events.js';
import { limitParam, pageTokenParam, text } from './common.js';

const events = z
  .array(z.enum(EVENT_TYPES))
  .min(1)
  .max(EVENT_TYPES.length)
  .refine((list) => new Set(list).size === list.length, {
    message: 'Event types must be unique',
    params: { code: 'duplicate_value' },
  });

export const createWebhookBody = z.strictObject({
  url: z.string().min(1).max(2048),
  events: events.nullable().optional(),
  description: text(500).nullable().optional(),
});

/** `status` may be set to active (re-enabling a paused endpoint) or disabled; `unreliable` is set only by the service. */
export const updateWebhookBody = z.strictObject({
  url: z.string().min(1).max(2048).optional(),
  events: events.nullable().optional(),
  description: text(500).nullable().optional(),
  status: z.enum(['active', 'disabled']).optional(),
});

export const webhookIdParams = z.object({ id: z.string().min(1).max(64) });
export const listWebhooksQuery = z.strictObject({ limit: limitParam, page_token: pageTokenParam });

export const listEventsQuery = z.strictObject({
  type: z.enum(EVENT_TYPES).optional().meta({ description: 'Only events of this type' }),
  payroll_id: z.string().min(1).max(64).optional().meta({ description: "Only this run's events" }),
  delivery_status: z
    .enum(DELIVERY_STATUSES)
    .optional()
    .meta({ description: 'Only events with a delivery in this status' }),
  limit: limitParam,
  page_token: pageTokenParam,
});
export const eventIdParams = z.object({ id: z.string().min(1).max(64) });
