import { NotFoundError } from '../../shared/domain/errors.js';
import { apiHandler } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { recordServices } from '../../shared/http/record-services.js';
import { routeById } from '../../shared/http/routes.js';
import { eventIdParams } from '../../shared/schemas/webhook.js';
import { eventView } from '../../shared/use-cases/events.js';

export const handler = apiHandler(routeById.getEvent, { params: eventIdParams }, async ({ principal, params }) => {
  const s = recordServices();
  const event = await s.events.get(principal.organizationId, params.id);
  if (!event) throw new NotFoundError();
  return ok(await eventView(s, event));
});
