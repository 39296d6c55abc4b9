import { apiHandler } from '../../shared/http/api-handler.js';
import { appServices, authenticator } from '../../shared/http/context.js';
import { ok } from '../../shared/http/envelope.js';
import { routeById } from '../../shared/http/routes.js';
import { apiKeyIdParams, rotateApiKeyBody } from '../../shared/schemas/api-key.js';
import { apiKeyView, rotateApiKey } from '../../shared/use-cases/api-keys.js';

/** The body is optional: an empty POST rotates with the default 24-hour grace period. */
export const handler = apiHandler(
  routeById.rotateApiKey,
  { body: rotateApiKeyBody, bodyOptional: true, params: apiKeyIdParams },
  async ({ principal, body, params }) => {
    const { apiKeys, deps } = appServices();
    const { record, token } = await rotateApiKey(
      apiKeys,
      deps,
      principal.organizationId,
      params.id,
      body?.grace_period_seconds,
    );
    // The old token now has an expiry: this container reads it again at once (others within the cache bound).
    if (record.previous_token_hash) authenticator().forget(record.previous_token_hash);
    return ok({ ...apiKeyView(record), token }, 'API key rotated; the new token is shown only once');
  },
);
