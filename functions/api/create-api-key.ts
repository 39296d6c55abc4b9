import { apiHandler } from '../../shared/http/api-handler.js';
import { appServices } from '../../shared/http/context.js';
import { created } from '../../shared/http/envelope.js';
import { routeById } from '../../shared/http/routes.js';
import { createApiKeyBody } from '../../shared/schemas/api-key.js';
import { apiKeyView, createApiKey } from '../../shared/use-cases/api-keys.js';

export const handler = apiHandler(routeById.createApiKey, { body: createApiKeyBody }, async ({ principal, body }) => {
  const { apiKeys, deps } = appServices();
  const { record, token } = await createApiKey(apiKeys, deps, principal.organizationId, principal.environment, body);
  return created(
    { ...apiKeyView(record), token },
    `/v1/api-keys/${record.api_key_id}`,
    'API key created; the token is shown only once',
  );
});
