import { apiHandler } from '../../shared/http/api-handler.js';
import { ok } from '../../shared/http/envelope.js';
import { listPage } from '../../shared/http/pagination.js';
import { recordServices } from '../../shared/http/record-services.js';
import { routeById } from '../../shared/http/routes.js';
import { listPayrollsQuery } from '../../shared/schemas/payroll.js';
import { payrollView } from '../../shared/use-cases/payroll-view.js';

export const handler = apiHandler(
  routeById.listPayrolls,
  { query: listPayrollsQuery },
  async ({ principal, query }) => {
    const orgId = principal.organizationId;
    const filters = { status: query.status, from: query.from, to: query.to };
    const page = await listPage({ orgId, query: `payroll:${JSON.stringify(filters)}` }, query.page_token, (start) =>
      recordServices().payrolls.list(orgId, filters, query.limit, start),
    );
    return ok({ payrolls: page.items.map(payrollView.summary), next_page_token: page.next_page_token });
  },
);
