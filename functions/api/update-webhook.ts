import { apiHandler } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { routeById } from '../../shared/http/routes.js';
import { webhookServices } from '../../shared/http/webhook-services.js';
import { updateWebhookBody, webhookIdParams } from '../../shared/schemas/webhook.js';
import { updateWebhook, webhookView } from '../../shared/use-cases/webhooks.js';

export const handler = apiHandler(
  routeById.updateWebhook,
  { body: updateWebhookBody, params: webhookIdParams },
  async ({ principal, params, body }) =>
    ok(
      webhookView(await updateWebhook(webhookServices(), principal.organizationId, params.id, body)),
      'Webhook endpoint updated',
    ),
);
