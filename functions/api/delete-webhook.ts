import { apiHandler } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { recordServices } from '../../shared/http/record-services.js';
import { routeById } from '../../shared/http/routes.js';
import { webhookIdParams } from '../../shared/schemas/webhook.js';
import { deleteWebhook, webhookView } from '../../shared/use-cases/webhooks.js';

export const handler = apiHandler(routeById.deleteWebhook, { params: webhookIdParams }, async ({ principal, params }) =>
  ok(
    webhookView(await deleteWebhook(recordServices(), principal.organizationId, params.id)),
    'Webhook endpoint removed',
  ),
);
