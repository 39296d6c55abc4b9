import { apiHandler } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { routeById } from '../../shared/http/routes.js';
import { webhookServices } from '../../shared/http/webhook-services.js';
import { webhookIdParams } from '../../shared/schemas/webhook.js';
import { rotateWebhookSecret, webhookView } from '../../shared/use-cases/webhooks.js';

export const handler = apiHandler(
  routeById.rotateWebhookSecret,
  { params: webhookIdParams },
  async ({ principal, params }) => {
    const { record, secret } = await rotateWebhookSecret(webhookServices(), principal.organizationId, params.id);
    return ok({ ...webhookView(record), secret }, 'Secret rotated; the previous one keeps signing for 24 hours');
  },
);
