import { NotFoundError } from '../../shared/domain/errors.js';
import { apiHandler } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { recordServices } from '../../shared/http/record-services.js';
import { routeById } from '../../shared/http/routes.js';
import { webhookIdParams } from '../../shared/schemas/webhook.js';
import { webhookView } from '../../shared/use-cases/webhooks.js';

export const handler = apiHandler(routeById.getWebhook, { params: webhookIdParams }, async ({ principal, params }) => {
  const webhook = await recordServices().webhooks.get(principal.organizationId, params.id);
  if (!webhook) throw new NotFoundError();
  return ok(webhookView(webhook));
});
