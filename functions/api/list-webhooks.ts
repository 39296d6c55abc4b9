import { apiHandler } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { listPage } from '../../shared/http/pagination.js';
import { recordServices } from '../../shared/http/record-services.js';
import { routeById } from '../../shared/http/routes.js';
import { listWebhooksQuery } from '../../shared/schemas/webhook.js';
import { webhookView } from '../../shared/use-cases/webhooks.js';

export const handler = apiHandler(
  routeById.listWebhooks,
  { query: listWebhooksQuery },
  async ({ principal, query }) => {
    const orgId = principal.organizationId;
    const page = await listPage({ orgId, query: 'webhooks' }, query.page_token, (start) =>
      recordServices().webhooks.list(orgId, query.limit, start),
    );
    return ok({ webhooks: page.items.map(webhookView), next_page_token: page.next_page_token });
  },
);
