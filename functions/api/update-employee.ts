import { apiHandler } from '../../shared/http/api-handler.js';
import { employeeServices } from '../../shared/http/employee-services.js';
import { ok } from '../../shared/http/envelope.js';
import { routeById } from '../../shared/http/routes.js';
import { employeeIdParams } from '../../shared/schemas/employee.js';
import { employeeView, updateEmployee } from '../../shared/use-cases/employees.js';

export const handler = apiHandler(
  routeById.updateEmployee,
  { body: 'raw', params: employeeIdParams },
  async ({ principal, params, body }) =>
    ok(
      employeeView(await updateEmployee(employeeServices(), principal.organizationId, params.id, body)),
      'Employee updated',
    ),
);
