import { apiHandler } from '../../shared/http/api-handler.js';
import { appServices, authenticator } from '../../shared/http/context.js';
import { ok } from '../../shared/http/envelope.js';
import { routeById } from '../../shared/http/routes.js';
import { apiKeyIdParams } from '../../shared/schemas/api-key.js';
import { apiKeyView, revokeApiKey } from '../../shared/use-cases/api-keys.js';

export const handler = apiHandler(routeById.revokeApiKey, { params: apiKeyIdParams }, async ({ principal, params }) => {
  const { apiKeys, deps } = appServices();
  const revoked = await revokeApiKey(apiKeys, deps, principal.organizationId, params.id);
  // This container stops trusting the token at once; others within the authorization cache bound.
  authenticator().forget(revoked.token_hash);
  return ok(apiKeyView(revoked), 'API key revoked');
});
