import { apiHandler } from '../../shared/http/api-handler.js';
import { created } from '../../shared/http/envelope.js';
import { routeById } from '../../shared/http/routes.js';
import { webhookServices } from '../../shared/http/webhook-services.js';
import { createWebhookBody } from '../../shared/schemas/webhook.js';
import { createWebhook, webhookView } from '../../shared/use-cases/webhooks.js';

export const handler = apiHandler(routeById.createWebhook, { body: createWebhookBody }, async ({ principal, body }) => {
  const { record, secret } = await createWebhook(webhookServices(), principal.organizationId, body);
  return created(
    { ...webhookView(record), secret },
    `/v1/webhooks/${record.webhook_id}`,
    'Webhook endpoint created; the secret is shown only once',
  );
});
