import { apiHandler } from '../../shared/http/api-handler.js';
import { appServices } from '../../shared/http/context.js';
import { ok } from '../../shared/http/envelope.js';
import { listPage } from '../../shared/http/pagination.js';
import { routeById } from '../../shared/http/routes.js';
import { listEmployeesQuery } from '../../shared/schemas/employee.js';
import { employeeView } from '../../shared/use-cases/employees.js';

export const handler = apiHandler(
  routeById.listEmployees,
  { query: listEmployeesQuery },
  async ({ principal, query }) => {
    const orgId = principal.organizationId;
    const page = await listPage({ orgId, query: 'employees' }, query.page_token, (start) =>
      appServices().employees.listActive(orgId, query.limit, start),
    );
    return ok({ employees: page.items.map(employeeView), next_page_token: page.next_page_token });
  },
);
