import { apiHandler } from '../../shared/http/api-handler.js';
import { appServices } from '../../shared/http/context.js';
import { ok } from '../../shared/http/envelope.js';
import { routeById } from '../../shared/http/routes.js';
import { employeeIdParams } from '../../shared/schemas/employee.js';
import { employeeView } from '../../shared/use-cases/employees.js';

export const handler = apiHandler(routeById.getEmployee, { params: employeeIdParams }, async ({ principal, params }) =>
  ok(employeeView(await appServices().employees.getActive(principal.organizationId, params.id))),
);
