import { apiHandler } from '../../shared/http/api-handler.js';
import { appServices } from '../../shared/http/context.js';
import { ok } from '../../shared/http/envelope.js';
import { listPage } from '../../shared/http/pagination.js';
import { routeById } from '../../shared/http/routes.js';
import { listApiKeysQuery } from '../../shared/schemas/api-key.js';
import { apiKeyView } from '../../shared/use-cases/api-keys.js';

export const handler = apiHandler(routeById.listApiKeys, { query: listApiKeysQuery }, async ({ principal, query }) => {
  const orgId = principal.organizationId;
  const page = await listPage({ orgId, query: 'api-keys' }, query.page_token, (start) =>
    appServices().apiKeys.list(orgId, query.limit, start),
  );
  return ok({ api_keys: page.items.map(apiKeyView), next_page_token: page.next_page_token });
});
