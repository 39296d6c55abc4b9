import { systemDeps } from '../../shared/adapters/clock.js';
import { defaultTable } from '../../shared/adapters/dynamo.js';
import { fieldEncryptor } from '../../shared/adapters/envelope-encryption.js';
import { observeApi } from '../../shared/adapters/observability.js';
import { webhookRoutes } from '../../shared/api/webhooks.js';
import { webhookUrlPolicy } from '../../shared/config/env.js';
import { NotFoundError } from '../../shared/domain/errors.js';
import { apiRouter } from '../../shared/http/api-handler.js';
import { created, ok } from '../../shared/http/envelope.js';
import { gateOver } from '../../shared/http/gate.js';
import { listPage } from '../../shared/http/pagination.js';
import { eventServicesOver, eventView, redeliverEvent, sendTestEvent } from '../../shared/use-cases/events.js';
import {
  createWebhook,
  deleteWebhook,
  rotateWebhookSecret,
  updateWebhook,
  webhookView,
  type WebhookServices,
} from '../../shared/use-cases/webhooks.js';

const table = defaultTable();
const events = eventServicesOver(table);
const { webhooks } = events;
const endpoints: WebhookServices = {
  webhooks,
  encryptor: fieldEncryptor('webhook-secret'),
  deps: systemDeps,
  environment: webhookUrlPolicy(),
};

/** /v1/webhooks and /v1/events: endpoints, their signing secrets, and the events with their deliveries. */
const router = apiRouter(
  webhookRoutes,
  {
    createWebhook: async ({ principal, body }) => {
      const { record, secret } = await createWebhook(endpoints, principal.organizationId, body);
      return created(
        { ...webhookView(record), secret },
        `/v1/webhooks/${record.webhook_id}`,
        'Webhook endpoint created; the secret is shown only once',
      );
    },
    listWebhooks: async ({ principal, query }) => {
      const orgId = principal.organizationId;
      const page = await listPage({ orgId, query: 'webhooks' }, query.page_token, (start) =>
        webhooks.list(orgId, query.limit, start),
      );
      return ok({ webhooks: page.items.map(webhookView), next_page_token: page.next_page_token });
    },
    getWebhook: async ({ principal, params }) => {
      const webhook = await webhooks.get(principal.organizationId, params.id);
      if (!webhook) throw new NotFoundError();
      return ok(webhookView(webhook));
    },
    updateWebhook: async ({ principal, params, body }) =>
      ok(
        webhookView(await updateWebhook(endpoints, principal.organizationId, params.id, body)),
        'Webhook endpoint updated',
      ),
    deleteWebhook: async ({ principal, params }) =>
      ok(webhookView(await deleteWebhook(endpoints, principal.organizationId, params.id)), 'Webhook endpoint removed'),
    rotateWebhookSecret: async ({ principal, params }) => {
      const { record, secret } = await rotateWebhookSecret(endpoints, principal.organizationId, params.id);
      return ok({ ...webhookView(record), secret }, 'Secret rotated; the previous one keeps signing for 24 hours');
    },
    sendTestEvent: async ({ principal, params }) => {
      const event = await sendTestEvent(events, principal.organizationId, params.id);
      return { status: 202, message: 'Test event queued', data: await eventView(events, event) };
    },
    listEvents: async ({ principal, query }) => {
      const orgId = principal.organizationId;
      const filters = { type: query.type, payrollId: query.payroll_id, deliveryStatus: query.delivery_status };
      const page = await listPage({ orgId, query: `events:${JSON.stringify(filters)}` }, query.page_token, (start) =>
        events.events.list(orgId, filters, query.limit, start),
      );
      return ok({
        events: await Promise.all(page.items.map((e) => eventView(events, e))),
        next_page_token: page.next_page_token,
      });
    },
    getEvent: async ({ principal, params }) => {
      const event = await events.events.get(principal.organizationId, params.id);
      if (!event) throw new NotFoundError();
      return ok(await eventView(events, event));
    },
    redeliverEvent: async ({ principal, params }) => {
      const event = await redeliverEvent(events, principal.organizationId, params.id);
      return { status: 202, message: 'Redelivery queued', data: await eventView(events, event) };
    },
  },
  { gate: gateOver(table) },
);

/** Traced, and its business metrics published as each request ends (shared/adapters/observability.ts). */
export const handler = observeApi(router);
