import { apiHandler } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { listPage } from '../../shared/http/pagination.js';
import { recordServices } from '../../shared/http/record-services.js';
import { routeById } from '../../shared/http/routes.js';
import { listEventsQuery } from '../../shared/schemas/webhook.js';
import { eventView } from '../../shared/use-cases/events.js';

export const handler = apiHandler(routeById.listEvents, { query: listEventsQuery }, async ({ principal, query }) => {
  const orgId = principal.organizationId;
  const filters = { type: query.type, payrollId: query.payroll_id, deliveryStatus: query.delivery_status };
  const s = recordServices();
  const page = await listPage({ orgId, query: `events:${JSON.stringify(filters)}` }, query.page_token, (start) =>
    s.events.list(orgId, filters, query.limit, start),
  );
  return ok({
    events: await Promise.all(page.items.map((e) => eventView(s, e))),
    next_page_token: page.next_page_token,
  });
});
