import { apiHandler } from '../../shared/http/api-handler.js';
import { eventServices } from '../../shared/http/record-services.js';
import { routeById } from '../../shared/http/routes.js';
import { eventIdParams } from '../../shared/schemas/webhook.js';
import { eventView, redeliverEvent } from '../../shared/use-cases/events.js';

export const handler = apiHandler(
  routeById.redeliverEvent,
  { params: eventIdParams },
  async ({ principal, params }) => {
    const s = eventServices();
    const event = await redeliverEvent(s, principal.organizationId, params.id);
    return { status: 202, message: 'Redelivery queued', data: await eventView(s, event) };
  },
);
