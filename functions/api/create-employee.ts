import { apiHandler } from '../../shared/http/api-handler.js';
import { employeeServices } from '../../shared/http/employee-services.js';
import { created } from '../../shared/http/envelope.js';
import { routeById } from '../../shared/http/routes.js';
import { createEmployee, employeeView } from '../../shared/use-cases/employees.js';

export const handler = apiHandler(routeById.createEmployee, { body: 'raw' }, async ({ principal, body }) => {
  const employee = await createEmployee(employeeServices(), principal.organizationId, body);
  return created(employeeView(employee), `/v1/employees/${employee.employee_id}`, 'Employee created');
});
