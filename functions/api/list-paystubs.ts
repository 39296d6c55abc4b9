import { apiHandler } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { listPage } from '../../shared/http/pagination.js';
import { paystubServices } from '../../shared/http/paystub-services.js';
import { routeById } from '../../shared/http/routes.js';
import { listPaystubsQuery } from '../../shared/schemas/paystub.js';
import { listPaystubs, paystubView } from '../../shared/use-cases/paystubs.js';

export const handler = apiHandler(
  routeById.listPaystubs,
  { query: listPaystubsQuery },
  async ({ principal, query }) => {
    const orgId = principal.organizationId;
    const filters = { employeeId: query.employee_id, payrollId: query.payroll_id, from: query.from, to: query.to };
    const page = await listPage({ orgId, query: `paystubs:${JSON.stringify(filters)}` }, query.page_token, (start) =>
      listPaystubs(paystubServices(), orgId, filters, query.limit, start),
    );
    return ok({ paystubs: page.items.map((p) => paystubView(p)), next_page_token: page.next_page_token });
  },
);
