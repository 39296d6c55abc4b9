import { REVERSAL_REASONS } from '../domain/money-back.js';
import * as z from 'zod';
import { DELIVERY_STATUSES, EVENT_TYPES, WEBHOOK_STATUSES } from '../domain/events.js';
import type { eventView } from '../use-cases/events.js';
import type { webhookView } from '../use-cases/webhooks.js';
import {
  createWebhookBody,
  eventIdParams,
  listEventsQuery,
  listWebhooksQuery,
  updateWebhookBody,
  webhookIdParams,
} from '../schemas/webhook.js';
import {
  EXAMPLE_IDS,
  accountLast4,
  amount,
  date,
  fits,
  id,
  int32,
  page,
  printable,
  returnCode,
  returnReason,
  routingNumber,
  timestamp,
  traceNumber,
  type Fits,
} from './common.js';
import { routes } from './route.js';

/**
 * The endpoint's URL as stored: normalized (`URL.toString()`, the fragment dropped) and, as the request schema checks,
 * at most 2048 characters so (shared/schemas/webhook.ts).
 */
const webhookUrl = z.string().max(2048).meta({ format: 'uri' });

/** QUOTAS.webhooks (shared/data/org-quota.ts, CONTRACT §3), not imported: route declarations stay free of the data layer. */
const MAX_WEBHOOK_ENDPOINTS = 10;

export const webhook = z
  .strictObject({
    webhook_id: id('whk', EXAMPLE_IDS.webhook),
    url: webhookUrl,
    events: z
      .array(z.enum(EVENT_TYPES))
      .max(EVENT_TYPES.length)
      .nullable()
      .meta({ description: '`null`: every event type' }),
    description: printable(500).nullable(),
    status: z
      .enum(WEBHOOK_STATUSES)
      .meta({ description: '`unreliable`: paused after 5 consecutive failed events, until set `active` again' }),
    consecutive_failures: int32(0),
    previous_secret_expires_at: timestamp
      .nullable()
      .meta({ description: 'Until then the rotated-out secret also signs' }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Webhook' });
fits<Fits<ReturnType<typeof webhookView>, typeof webhook>>(true);

const webhookWithSecret = webhook
  .extend({
    // newWebhookSecret (shared/use-cases/webhooks.ts): 24 random bytes in base64.
    secret: z
      .string()
      .max(38)
      .regex(/^whsec_[A-Za-z0-9+/]{32}$/)
      .meta({
        description: 'The Standard Webhooks signing secret: shown only in this answer',
        example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      }),
  })
  .meta({ id: 'WebhookWithSecret' });

const attempt = z.strictObject({
  at: timestamp,
  // Node's HTTP client reads three-digit statuses only.
  status_code: int32(100, 999).nullable().meta({ description: "The receiver's status; `null` when no answer came" }),
  latency_ms: int32(0),
  // What the delivery saw (shared/adapters/webhook-url.ts): a network error's code, or the status and up to 200
  // characters of the receiver's answer flattened to printable text.
  error: printable(1000).nullable(),
});

const paymentReturnedData = z
  .strictObject({
    paystub_id: id('stub', EXAMPLE_IDS.paystub),
    employee_id: id('emp', EXAMPLE_IDS.employee),
    payroll_id: id('pay', EXAMPLE_IDS.payroll),
    amount: amount.meta({ description: 'The deposit that came back (the net pay)' }),
    code: returnCode,
    reason: returnReason,
    trace_number: traceNumber,
    returned_at: timestamp,
  })
  .meta({ id: 'PaymentReturnedData', description: 'The `data` of `payment.returned`' });

const paymentReversedData = z
  .strictObject({
    paystub_id: id('stub', EXAMPLE_IDS.paystub),
    employee_id: id('emp', EXAMPLE_IDS.employee),
    payroll_id: id('pay', EXAMPLE_IDS.payroll),
    amount: amount.meta({ description: 'The deposit taken back (the net pay)' }),
    reason: z.enum(REVERSAL_REASONS),
    trace_number: traceNumber.meta({ description: 'The original deposit' }),
    reversal_trace_number: traceNumber.meta({ description: 'The reversal debit' }),
    file_id: id('file', EXAMPLE_IDS.file),
    effective_entry_date: date.meta({ description: 'The day the reversal debit settles' }),
  })
  .meta({ id: 'PaymentReversedData', description: 'The `data` of `payment.reversed`' });

const paymentReversalReturnedData = z
  .strictObject({
    paystub_id: id('stub', EXAMPLE_IDS.paystub),
    employee_id: id('emp', EXAMPLE_IDS.employee),
    payroll_id: id('pay', EXAMPLE_IDS.payroll),
    amount: amount.meta({ description: 'The reversal debit the bank returned' }),
    code: returnCode,
    reason: returnReason,
    reversal_trace_number: traceNumber,
    file_id: id('file', EXAMPLE_IDS.file),
    returned_at: timestamp,
  })
  .meta({ id: 'PaymentReversalReturnedData', description: 'The `data` of `payment.reversal_returned`' });

const bankAccountCorrectedData = z
  .strictObject({
    employee_id: id('emp', EXAMPLE_IDS.employee),
    paystub_id: id('stub', EXAMPLE_IDS.paystub).meta({
      description: 'The paystub whose deposit the notification of change is about',
    }),
    payroll_id: id('pay', EXAMPLE_IDS.payroll),
    code: z
      .string()
      .max(3)
      .regex(/^C\d{2}$/),
    trace_number: traceNumber,
    bank_account: z
      .strictObject({
        account_type: z.enum(['checking', 'savings']),
        routing_number: routingNumber,
        account_number_last4: accountLast4,
        status: z.enum(['active', 'invalid']),
      })
      .meta({ description: 'The corrected account, masked: never the full account number' }),
    corrected_at: timestamp,
  })
  .meta({ id: 'BankAccountCorrectedData', description: 'The `data` of `employee.bank_account_corrected`' });

const webhookTestData = z
  .strictObject({
    test: z.literal(true).meta({ description: 'Always `true`: a test, not a payroll change' }),
    webhook_id: id('whk', EXAMPLE_IDS.webhook).meta({ description: 'The endpoint the test was sent to' }),
    url: webhookUrl,
    message: printable(200),
  })
  .meta({ id: 'WebhookTestData', description: 'The `data` of `webhook.test`' });

export const event = z
  .strictObject({
    id: id('evt', EXAMPLE_IDS.event),
    type: z.enum(EVENT_TYPES),
    timestamp,
    data: z
      .union([
        paymentReturnedData,
        paymentReversedData,
        paymentReversalReturnedData,
        bankAccountCorrectedData,
        webhookTestData,
        z.record(z.string(), z.unknown()),
      ])
      .meta({
        description:
          'Payroll events: the run (`payroll_id`, `status`, `type`, the period, `pay_date`, `effective_entry_date`, `release_by`, `employee_count`, `totals`, `content_hash`) plus what the event adds (`reason`, `findings`, `disbursement`). `paystub.generated`: `payroll_id`, `paystub_count`, `pay_date`, `paystubs_url`. `payroll.funding_returned`: the run plus `funding` and the returned `trace_number`. `payment.returned`: `PaymentReturnedData`. `payment.reversed`: `PaymentReversedData`. `payment.reversal_returned`: `PaymentReversalReturnedData`. `employee.bank_account_corrected`: `BankAccountCorrectedData`. `webhook.test`: `WebhookTestData`.',
      }),
    payroll_id: id('pay', EXAMPLE_IDS.payroll).nullable(),
    // One delivery per endpoint the event went to: the endpoints subscribed when it was fanned out (or, for one
    // that had none, when it was redelivered): at most the endpoints an organization may hold.
    deliveries: z
      .array(
        z.strictObject({
          webhook_id: id('whk', EXAMPLE_IDS.webhook),
          url: webhookUrl,
          status: z.enum(DELIVERY_STATUSES),
          // No maxItems: every redelivery adds its attempts, and past ones are kept. Left out of the OWASP check.
          attempts: z.array(attempt),
        }),
      )
      .max(MAX_WEBHOOK_ENDPOINTS)
      .meta({
        description:
          'One per endpoint the event was sent to. Empty: no `active` endpoint was subscribed to its type when it happened (a paused `unreliable` or a `disabled` endpoint gets no new events): it was not delivered, and a redelivery sends it to the endpoints subscribed now.',
      }),
  })
  .meta({
    id: 'Event',
    description:
      'An event as receivers get it (`id`, `type`, `timestamp`, `data`), with its deliveries and every attempt',
  });
fits<Fits<Awaited<ReturnType<typeof eventView>>, typeof event>>(true);

const WEBHOOK = {
  webhook_id: EXAMPLE_IDS.webhook,
  url: 'https://hooks.example.com/payroll',
  events: ['payroll.completed', 'payroll.failed'],
  description: 'ledger',
  status: 'active',
  consecutive_failures: 0,
  previous_secret_expires_at: null,
  created_at: '2026-11-02T09:20:00.000Z',
  updated_at: '2026-11-02T09:20:00.000Z',
} satisfies z.input<typeof webhook>;
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const EVENT = {
  id: EXAMPLE_IDS.event,
  type: 'payroll.completed',
  timestamp: '2026-11-21T10:02:28.752Z',
  data: {
    payroll_id: EXAMPLE_IDS.payroll,
    status: 'completed',
    type: 'regular',
    pay_period_start: '2026-11-01',
    pay_period_end: '2026-11-14',
    pay_date: '2026-11-20',
    employee_count: 1,
    totals: { gross_pay: 3200, bonuses: 150, deductions: 760.5, net_pay: 2589.5 },
    content_hash: '9e83f1c4be8e2a1d5f6c7b8a9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f7a8b9c0',
  },
  payroll_id: EXAMPLE_IDS.payroll,
  deliveries: [
    {
      webhook_id: EXAMPLE_IDS.webhook,
      url: 'https://hooks.example.com/payroll',
      status: 'succeeded',
      attempts: [{ at: '2026-11-21T10:02:28.901Z', status_code: 200, latency_ms: 84, error: null }],
    },
  ],
} satisfies z.input<typeof event>;

const TEST_EVENT = {
  ...EVENT,
  type: 'webhook.test',
  data: {
    test: true,
    webhook_id: EXAMPLE_IDS.webhook,
    url: 'https://hooks.example.com/payroll',
    message: 'A test event sent on request from the API or the dashboard: no payroll changed',
  },
  payroll_id: null,
  deliveries: [
    { webhook_id: EXAMPLE_IDS.webhook, url: 'https://hooks.example.com/payroll', status: 'pending', attempts: [] },
  ],
} satisfies z.input<typeof event>;

const webhookParams = webhookIdParams.extend({
  id: webhookIdParams.shape.id.meta({ description: 'A webhook endpoint id', example: EXAMPLE_IDS.webhook }),
});
const eventParams = eventIdParams.extend({
  id: eventIdParams.shape.id.meta({ description: 'An event id', example: EXAMPLE_IDS.event }),
});
const WEBHOOK_RESPONSE = { schema: webhook, envelope: 'WebhookResponse' };
const UNSAFE =
  '`unsafe_url` in `details` for a URL that is not https:// or resolves to a private, loopback, link-local or metadata address';

export const webhookRoutes = routes('webhooks', {
  createWebhook: {
    method: 'POST',
    path: '/v1/webhooks',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Register a webhook endpoint (its signing secret is shown once)',
    access: ['kms:encrypt:webhook-secret'],
    tag: 'Webhooks',
    description:
      'Registers an endpoint for signed (Standard Webhooks) deliveries. Leave `events` out to receive every type. The signing secret is in this answer only.',
    body: {
      schema: createWebhookBody,
      example: {
        url: 'https://hooks.example.com/payroll',
        events: ['payroll.completed', 'payroll.failed'],
        description: 'ledger',
      },
    },
    success: [
      {
        status: 201,
        description: 'Created, with its `secret` (shown once)',
        schema: webhookWithSecret,
        envelope: 'WebhookWithSecretResponse',
        message: 'Webhook endpoint created; the secret is shown only once',
        example: { ...WEBHOOK, secret: SECRET },
        location: true,
      },
    ],
    errors: {
      400: `A malformed or unknown field, or ${UNSAFE}`,
      413: 'The body is over 6 MB',
      422: '`webhook_limit_reached`: the organization already has 10 endpoints (delete one first)',
    },
  },
  listWebhooks: {
    method: 'GET',
    path: '/v1/webhooks',
    scope: 'admin',
    bucket: 'read',
    summary: 'List webhook endpoints',
    access: ['secret:signing'],
    tag: 'Webhooks',
    description: 'Every endpoint of the organization.',
    query: listWebhooksQuery,
    success: [
      {
        status: 200,
        description: 'One page',
        schema: page('webhooks', webhook),
        envelope: 'WebhookListResponse',
        example: { webhooks: [WEBHOOK], next_page_token: null },
      },
    ],
    errors: {
      400: 'An invalid `limit` or unknown parameter, or an altered or foreign `page_token` (`invalid_page_token`)',
    },
  },
  getWebhook: {
    method: 'GET',
    path: '/v1/webhooks/{id}',
    scope: 'admin',
    bucket: 'read',
    summary: 'Get a webhook endpoint',
    access: [],
    tag: 'Webhooks',
    description: 'One endpoint (never its secret).',
    params: webhookParams,
    success: [{ status: 200, description: 'The endpoint', ...WEBHOOK_RESPONSE, example: WEBHOOK }],
    errors: { 404: 'No endpoint with this id in your organization' },
  },
  updateWebhook: {
    method: 'PATCH',
    path: '/v1/webhooks/{id}',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Change a webhook endpoint, or re-enable a paused one',
    access: [],
    tag: 'Webhooks',
    description:
      'Changes `url`, `events`, `description`, or `status`: `active` re-enables a paused endpoint (and clears its failure count), `disabled` stops deliveries.',
    params: webhookParams,
    body: { schema: updateWebhookBody, example: { status: 'active' } },
    success: [
      {
        status: 200,
        description: 'The endpoint',
        ...WEBHOOK_RESPONSE,
        message: 'Webhook endpoint updated',
        example: WEBHOOK,
      },
    ],
    errors: {
      400: `A malformed or unknown field, or ${UNSAFE}`,
      404: 'No endpoint with this id in your organization',
      409: '`conflict`: modified concurrently, retry',
      413: 'The body is over 6 MB',
    },
  },
  deleteWebhook: {
    method: 'DELETE',
    path: '/v1/webhooks/{id}',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Remove a webhook endpoint',
    access: [],
    tag: 'Webhooks',
    description: 'Removes an endpoint; it gets no further deliveries.',
    params: webhookParams,
    success: [
      {
        status: 200,
        description: 'The removed endpoint',
        ...WEBHOOK_RESPONSE,
        message: 'Webhook endpoint removed',
        example: WEBHOOK,
      },
    ],
    errors: { 404: 'No endpoint with this id in your organization' },
  },
  rotateWebhookSecret: {
    method: 'POST',
    path: '/v1/webhooks/{id}/rotate-secret',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Rotate the signing secret (both sign for 24 hours)',
    access: ['kms:encrypt:webhook-secret'],
    tag: 'Webhooks',
    description:
      'A new signing secret (shown once). The previous one keeps signing beside it for 24 hours (`previous_secret_expires_at`), so receivers can switch without dropping an event.',
    params: webhookParams,
    success: [
      {
        status: 200,
        description: 'The endpoint with its new `secret`',
        schema: webhookWithSecret,
        envelope: 'WebhookWithSecretResponse',
        message: 'Secret rotated; the previous one keeps signing for 24 hours',
        example: { ...WEBHOOK, previous_secret_expires_at: '2026-11-22T09:30:00.000Z', secret: SECRET },
      },
    ],
    errors: { 404: 'No endpoint with this id in your organization', 409: '`conflict`: modified concurrently, retry' },
  },
  sendTestEvent: {
    method: 'POST',
    path: '/v1/webhooks/{id}/test',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Send a test event to one endpoint',
    access: ['queue:webhooks:send'],
    tag: 'Webhooks',
    description:
      "Records a `webhook.test` event (`data.test: true`, naming the endpoint) and delivers it to this endpoint alone, whatever its `events` list, as any event: signed, retried, with its attempts in the event log (`GET /v1/events/{id}`, the id in this answer) and redeliverable. At most one per address (the URL's scheme, host and port) per minute, however many endpoints of the organization name it (deleting and registering an endpoint again, or changing its path, does not reset it): `429 rate_limited` with `Retry-After` otherwise. An endpoint paused as `unreliable` gets it (to check a receiver before re-enabling it); a `disabled` one does not (`409`). Never fanned out to other endpoints, and a redelivery sends it to this endpoint only. Like any event, its outcome counts toward the endpoint's consecutive failures.",
    params: webhookParams,
    success: [
      {
        status: 202,
        description: 'Queued; the test event with its delivery',
        schema: event,
        envelope: 'EventResponse',
        message: 'Test event queued',
        example: TEST_EVENT,
      },
    ],
    errors: {
      404: 'No endpoint with this id in your organization',
      409: '`conflict` with a `webhook_disabled` detail: the endpoint is disabled (set its `status` to `active` first)',
    },
  },
  listEvents: {
    method: 'GET',
    path: '/v1/events',
    scope: 'admin',
    bucket: 'read',
    summary: 'List events with their delivery attempts',
    access: ['secret:signing'],
    tag: 'Events',
    description: 'Events, newest first, each with its deliveries and every attempt.',
    query: listEventsQuery,
    success: [
      {
        status: 200,
        description: 'One page',
        schema: page('events', event),
        envelope: 'EventListResponse',
        example: { events: [EVENT], next_page_token: null },
      },
    ],
    errors: {
      400: 'An invalid filter, `limit` or unknown parameter, or an altered or foreign `page_token` (`invalid_page_token`)',
    },
  },
  getEvent: {
    method: 'GET',
    path: '/v1/events/{id}',
    scope: 'admin',
    bucket: 'read',
    summary: 'Get an event with its delivery attempts',
    access: [],
    tag: 'Events',
    description: 'One event with its deliveries.',
    params: eventParams,
    success: [{ status: 200, description: 'The event', schema: event, envelope: 'EventResponse', example: EVENT }],
    errors: { 404: 'No event with this id in your organization' },
  },
  redeliverEvent: {
    method: 'POST',
    path: '/v1/events/{id}/redeliver',
    scope: 'admin',
    bucket: 'employee_write',
    summary: 'Send an event again',
    access: ['queue:webhooks:send'],
    tag: 'Events',
    description:
      'Sends an event again (same `webhook-id`): to every endpoint it was delivered to, or, if it never had one, to the endpoints subscribed now. A `webhook.test` event goes only to the endpoint it names.',
    params: eventParams,
    success: [
      {
        status: 202,
        description: 'Queued; the event with its deliveries reopened',
        schema: event,
        envelope: 'EventResponse',
        message: 'Redelivery queued',
        example: { ...EVENT, deliveries: [{ ...EVENT.deliveries[0]!, status: 'pending' }] },
      },
    ],
    errors: { 404: 'No event with this id in your organization' },
  },
});
